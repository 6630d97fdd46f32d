"""Device check: chapters 05 and 10 run on a CUDA device (sampling, losses, training steps, decoding).

Not collected by pytest (CI has no GPU). On a machine with one, from the repository root::

    PYTHONPATH=src python tests/device/cuda_check.py cuda

Each check prints ``[ok]`` or ``[FAIL]`` with the traceback, and the models are compared with their CPU
copies (samples within float32 rounding, greedy decoding token for token, speculative decoding lossless).
It needs only torch, numpy, scipy and tqdm. Last run: an H200 (torch 2.11, CUDA 13), all five checks ok.
"""

import copy
import sys
import time
import traceback

import torch

DEV = torch.device(sys.argv[1] if len(sys.argv) > 1 else ("cuda" if torch.cuda.is_available() else "cpu"))
print("device", DEV, torch.__version__, flush=True)
results = {}


def check(name, fn):
    t = time.time()
    try:
        out = fn()
        results[name] = "ok"
        print(f"[ok] {name} ({time.time() - t:.1f}s) {out if out is not None else ''}", flush=True)
    except Exception:
        results[name] = "FAIL"
        print(f"[FAIL] {name}", flush=True)
        traceback.print_exc()


def ssd_checks():
    from neurips26.ssd.prepare import (
        MODEL_NAMES,
        PrepareConfig,
        model_spec,
        pretrained,
        sample_images,
        train_config,
        validation_images,
        validation_loss,
    )
    from neurips26.ssd.train import train_denoiser

    name = MODEL_NAMES[0]
    model_cpu, meta = pretrained(name, "default", verbose=False)
    model = copy.deepcopy(model_cpu).to(DEV)

    def sample():
        a = sample_images(model, 4, seed=0, steps=6)
        b = sample_images(model_cpu, 4, seed=0, steps=6)
        return f"device {a.device}, max |cuda − cpu| = {(a.cpu() - b).abs().max():.2e}"

    check("ssd: sample_images on the device", sample)

    def vloss():
        imgs = validation_images(model_spec(name).data, PrepareConfig.for_scale("default"))[:64]
        a = validation_loss(model, imgs.to(DEV), seed=0)
        b = validation_loss(model_cpu, imgs, seed=0)
        return f"{a:.6f} vs cpu {b:.6f}"

    check("ssd: validation_loss on the device", vloss)

    def train():
        import dataclasses

        cfg = dataclasses.replace(
            train_config(model_spec(name), PrepareConfig.for_scale("default")), steps=5, eval_every=5
        )
        imgs = validation_images(model_spec(name).data, PrepareConfig.for_scale("default"))[:256]
        m, _ = pretrained(name, "default", verbose=False)
        m = m.to(DEV)
        train_denoiser(m, imgs.to(DEV), cfg, progress=False)
        return f"5 steps; params on {next(m.parameters()).device}"

    check("ssd: train_denoiser 5 steps on the device", train)


def specblock_checks():
    from neurips26.specblock.data import tokenizer
    from neurips26.specblock.decode import speculative_generate, vanilla_generate
    from neurips26.specblock.dynamic_tree import SpecBlockProposer
    from neurips26.specblock.prepare import MODEL_NAMES, PrepareConfig, pretrained, pretrained_target

    name = next(n for n in MODEL_NAMES if "specblock" in n)
    drafter_cpu, meta = pretrained(name, "default", verbose=False)
    target_cpu = pretrained_target("default")
    target = copy.deepcopy(target_cpu).to(DEV)
    drafter = copy.deepcopy(drafter_cpu).to(DEV)
    tok = tokenizer()
    prompt = tok.encode("def f(x): return")

    def lossless():
        v = vanilla_generate(target, prompt, 40)
        s = speculative_generate(target, SpecBlockProposer(drafter), prompt, 40, total_tokens=60)
        same = list(v.tokens) == list(s.tokens)
        c = vanilla_generate(target_cpu, prompt, 40)
        agree = list(c.tokens) == list(v.tokens)
        return f"lossless={same}, {len(s.tokens)} tokens; greedy cuda == greedy cpu: {agree}"

    check("specblock: speculative == vanilla on the device", lossless)

    def train():
        from neurips26.specblock.prepare import distillation
        from neurips26.specblock.train_drafter import DrafterTraining, train_specblock

        data = distillation(PrepareConfig.for_scale("default"), "train")
        d, h = train_specblock(target, data, DrafterTraining(steps=3, batch=4), show_progress=False)
        return "3 steps"

    check("specblock: train_specblock 3 steps on the device", train)


for section in (ssd_checks, specblock_checks):
    try:
        section()
    except Exception:
        print(f"[FAIL] {section.__name__} setup")
        traceback.print_exc()
        results[section.__name__] = "FAIL"
print("SUMMARY", results)
