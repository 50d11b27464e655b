"""Simulation: schedules, the independent checker and the slot-by-slot engine."""

from mlsched.sim.check import ScheduleViolation, assert_feasible, check, check_allocation
from mlsched.sim.engine import Policy, RunResult, SlotDecision, SlotState, run
from mlsched.sim.schedule import ClusterSchedule

__all__ = ["ClusterSchedule", "Policy", "RunResult", "ScheduleViolation", "SlotDecision", "SlotState",
           "assert_feasible", "check", "check_allocation", "run"]
