"""Build models/*.json from Gavel's measured throughputs.

    python tools/build_model_profiles.py [path/to/gavel-simulation-throughputs.json]

One profile per model at one batch size (the largest batch size measured alone on one GPU of
every type), with iteration time per GPU type and the throughput scaling over 1, 2, 4 and 8
GPUs; ``job_types`` keeps every measured throughput of the model alone, by Gavel job type
("ResNet-50 (batch size 32)"), GPU type and GPU count, 0 included (the job does not fit there),
for Gavel's traces. Gradient sizes are parameter counts x 4 bytes; the counts are general knowledge, not
Gavel's data, and each profile says how sure that figure is.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = ROOT.parent / "shared" / "traces" / "gavel-simulation-throughputs.json"
GPU_TYPES = ("k80", "p100", "v100")
ATTRIBUTION = ("Contains data derived from the Microsoft Philly trace (CC BY 4.0), as processed by the AdaptDL "
               "project (Apache-2.0) and the Gavel project (MIT).")
# model name in Gavel -> (slug, parameters in millions, how sure)
PARAMETERS = {
    "ResNet-18": ("resnet18", 11.7, "general knowledge (torchvision ResNet-18)"),
    "ResNet-50": ("resnet50", 25.6, "general knowledge (torchvision ResNet-50)"),
    "Transformer": ("transformer", 65.0, "approximate: Transformer-base size; Gavel's Multi30k model may be smaller"),
    "LM": ("lm", 28.0, "approximate: 2-layer LSTM language model on WikiText-2; uncertain"),
    "Recommendation": ("recommendation", 20.0, "approximate: autoencoder on MovieLens-20M; uncertain"),
    "A3C": ("a3c", 1.5, "approximate: small actor-critic network; uncertain"),
    "CycleGAN": ("cyclegan", 28.3, "approximate: two generators and two discriminators; uncertain"),
}


def parse_key(key: str) -> tuple[str, int | None, int]:
    name, gpus = ast.literal_eval(key)
    match = re.fullmatch(r"(.+) \(batch size (\d+)\)", name)
    return (match.group(1), int(match.group(2)), gpus) if match else (name, None, gpus)


def _batch(job_type: str) -> int:
    match = re.search(r"\(batch size (\d+)\)$", job_type)
    return int(match.group(1)) if match else 0


def main() -> None:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_SOURCE
    data = json.loads(source.read_text())
    table: dict[tuple[str, int | None], dict[str, dict[int, float]]] = {}
    job_types: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for gpu in GPU_TYPES:
        for key, entry in data[gpu].items():
            model, batch, gpus = parse_key(key)
            table.setdefault((model, batch), {}).setdefault(gpu, {})[gpus] = entry["null"]
            job_type = ast.literal_eval(key)[0]
            job_types.setdefault(model, {}).setdefault(job_type, {}).setdefault(gpu, {})[str(gpus)] = entry["null"]
    out_dir = ROOT / "models"
    out_dir.mkdir(exist_ok=True)
    for model, (slug, millions, note) in PARAMETERS.items():
        complete = [b for (m, b), per_gpu in table.items()
                    if m == model and all(1 in per_gpu.get(g, {}) for g in GPU_TYPES)]
        batch = max(complete, key=lambda b: b or 0)
        per_gpu = table[(model, batch)]
        profile = {
            "name": slug,
            "model": model,
            "batch_size": batch,
            "iteration_seconds": {g: 1.0 / per_gpu[g][1] for g in GPU_TYPES},
            "throughput_steps_per_second": {g: {str(n): per_gpu[g][n] for n in sorted(per_gpu[g]) if per_gpu[g][n] > 0}
                                            for g in GPU_TYPES},
            "job_types": {name: {g: dict(sorted(curves[g].items(), key=lambda kv: int(kv[0]))) for g in GPU_TYPES}
                          for name, curves in sorted(job_types[model].items(), key=lambda kv: _batch(kv[0]))},
            "gradient_mb": round(millions * 4.0, 3),
            "notes": {"gradient_mb": f"{millions}M parameters x 4 bytes; {note}"},
            "source": "stanford-futuredata/gavel scheduler/simulation_throughputs.json (MIT)",
            "attribution": ATTRIBUTION,
        }
        (out_dir / f"{slug}.json").write_text(json.dumps(profile, indent=1) + "\n")
        print(f"models/{slug}.json: batch {batch}, v100 {profile['iteration_seconds']['v100'] * 1e3:.1f} ms/step")


if __name__ == "__main__":
    main()
