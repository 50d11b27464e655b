"""OgaSched: online gradient ascent for multi-server jobs with sublinear regret."""

from mlsched.online.ogasched.policy import OgaSched, diameter_bound, gradient_bound, regret_bound
from mlsched.online.ogasched.projection import project_block_paper, project_exact, project_paper

__all__ = ["OgaSched", "diameter_bound", "gradient_bound", "project_block_paper", "project_exact", "project_paper",
           "regret_bound"]
