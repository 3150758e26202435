"""The shared driver of the realistic benches (``resnet.py``, ``gpt.py``).

A bench describes its model once as a :class:`Workload` (the mscore network, the same model
as a torch module and as a jax function, how parameter names map, the FLOPs of a step); the
drivers :func:`torch_comparisons` and :func:`jax_comparisons` build, from the same initial
weights and batches, the mscore train step and the hand-written native step at each amp
level, compare their first losses, and time them.

Timing (:func:`time_interleaved`): every variant is warmed up, then ``rounds`` rounds run; in
each round every variant runs ``steps`` steps (the order rotates between rounds, so a slow
phase of a shared machine hits all variants alike) between two device synchronisations.
Reported: the median seconds per step of each variant, the median of the per-round ratios to
native, and the spread of the rounds (how noisy the machine was).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time


def common_arguments(parser, batch, levels="O0,O2,bf16"):
    """Options every realistic bench takes."""
    parser.add_argument("--backend", default="torch,jax",
                        help="comma-separated backends to compare with their native program")
    parser.add_argument("--levels", default=levels,
                        help="comma-separated: O0 (float32), O2 (float16, dynamic loss "
                             "scale), bf16 (O2 in bfloat16, no loss scale)")
    parser.add_argument("--batch", type=int, default=batch)
    parser.add_argument("--device", choices=("CPU", "GPU"), default="CPU")
    parser.add_argument("--rounds", type=int, default=None,
                        help="interleaved timing rounds (default: 5; with --clock cpu 101, "
                             "as many short rounds cancel a shared machine's slow phases)")
    parser.add_argument("--steps", type=int, default=2, help="steps per variant per round")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps per variant")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall: perf_counter; cpu: this process's CPU time (steadier on a "
                             "shared machine with one thread; CPU only)")
    parser.add_argument("--threads", type=int, default=1,
                        help="intra-op threads of torch and XLA:CPU (0: the libraries' "
                             "default)")
    parser.add_argument("--mode", choices=("pynative", "graph", "both"), default="pynative",
                        help="torch: mscore's step in PYNATIVE, GRAPH_MODE (torch.compile "
                             "with CUDA graphs on a GPU, eager on CPU) or both, each against "
                             "native eager (jax is always GRAPH_MODE)")
    parser.add_argument("--json", default=None,
                        help="also write the results (s/step per level and variant, "
                             "ratios, first-call seconds) to this JSON file")


def check_arguments(parser, args):
    """Validate the common options."""
    if args.rounds is None:
        args.rounds = 101 if args.clock == "cpu" else 5
    for name in ("batch", "rounds", "steps"):
        if getattr(args, name) < 1:
            parser.error(f"--{name}: expected a positive int")
    if args.warmup < 0:
        parser.error("--warmup: expected a non-negative int")
    if args.clock == "cpu" and args.device == "GPU":
        parser.error("--clock cpu measures the host only; use --clock wall on a GPU")
    levels = args.levels.split(",")
    bad = sorted(set(levels) - set(LEVELS))
    if bad:
        parser.error(f"--levels: unknown {bad}; expected some of {list(LEVELS)}")
    args.levels = levels
    args.backend = args.backend.split(",")
    bad = sorted(set(args.backend) - {"torch", "jax"})
    if bad:
        parser.error(f"--backend: expected torch and/or jax, got {bad}")


# level -> (mscore amp level, low dtype name or None, dynamic loss scaling)
LEVELS = {"O0": ("O0", None, False), "O2": ("O2", "float16", True),
          "bf16": ("O2", "bfloat16", False)}


def limit_threads(threads):
    """One intra-op thread for torch and XLA:CPU (set before jax is imported)."""
    if threads:
        flags = os.environ.get("XLA_FLAGS", "")
        if "intra_op_parallelism_threads" not in flags:
            os.environ["XLA_FLAGS"] = (flags + " --xla_cpu_multi_thread_eigen=false "
                                       f"intra_op_parallelism_threads={threads}").strip()


def time_interleaved(fns, sync, args):
    """``(median s/step per variant, median per-round ratio to native per variant)``."""
    for fn in fns.values():
        for _ in range(args.warmup):
            fn()
    sync()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    names = list(fns)
    per_step = {n: [] for n in names}
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            fn = fns[name]
            sync()
            t0 = clock()
            for _ in range(args.steps):
                fn()
            sync()
            per_step[name].append((clock() - t0) / args.steps)
    ratios = {n: [a / b for a, b in zip(per_step[n], per_step["native"])]
              for n in names if n != "native"}
    spread = {n: (max(v) - min(v)) / statistics.median(v) for n, v in per_step.items()}
    return ({n: statistics.median(v) for n, v in per_step.items()},
            {n: statistics.median(v) for n, v in ratios.items()}, spread)


def report(title, medians, ratios, spread, flops, device, out):
    """Print one comparison: ms/step, steps/s, TFLOP/s on GPU, ratio to native."""
    native = medians["native"]
    for name, t in medians.items():
        line = (f"[{title}] {name:>14s}: {t * 1e3:9.2f} ms/step {1.0 / t:8.3f} steps/s "
                f"(round spread {spread[name] * 100:4.1f}%)")
        if device == "GPU":
            line += f" {flops / t / 1e12:7.2f} TFLOP/s"
        if name != "native":
            line += (f"  ratio mscore/native = {t / native:.3f} (median of per-round ratios "
                     f"{ratios[name]:.3f})")
        print(line, file=out, flush=True)


def speedups(results, out):
    """The O2/O0 speedup of each side, from ``{level: {variant: s/step}}``."""
    base = results.get("O0")
    if base is None:
        return
    for level, med in results.items():
        if level == "O0":
            continue
        parts = [f"{name} {base[name] / med[name]:.2f}x" for name in med if name in base]
        print(f"speedup {level} over O0 (O0 time / {level} time): " + ", ".join(parts),
              file=out, flush=True)


def parser(description):
    """An ArgumentParser with the bench's description."""
    return argparse.ArgumentParser(description=description)


class Workload:
    """What a bench provides (subclasses implement every method)."""

    title = "model"

    def mscore_net(self):
        """The mscore network (built on the active backend)."""
        raise NotImplementedError

    def mscore_loss(self):
        """The mscore loss cell applied to ``(net(x), y)``."""
        raise NotImplementedError

    def torch_net(self, torch):
        """The same model as a torch ``nn.Module``."""
        raise NotImplementedError

    def torch_name(self, ms_name):
        """The torch state_dict key of an mscore parameter name."""
        raise NotImplementedError

    def torch_loss(self, torch, out, y):
        """The native loss of the module's output."""
        raise NotImplementedError

    def jax_apply(self, params, state, x, low_dt, precision):
        """``(float32 logits, new state)`` of the model in jax (weights cast to ``low_dt``
        where the network computes in low precision)."""
        raise NotImplementedError

    def jax_loss(self, logits, y):
        """The native loss of the logits."""
        raise NotImplementedError

    def is_state(self, ms_name):
        """True for parameters that are buffers (BatchNorm statistics)."""
        return False

    def flops(self):
        """FLOPs of one train step (3x the forward's multiply-adds x2)."""
        raise NotImplementedError


def mscore_step(workload, ms, level, lr, momentum):
    """The mscore train cell of ``level`` and the initial weights as numpy."""
    from mscore import amp, nn
    amp_level, low, scaled = LEVELS[level]
    ms.set_seed(0)
    net = workload.mscore_net()
    weights = {name: p.asnumpy() for name, p in net.parameters_and_names()}
    opt = nn.Momentum(net.trainable_params(), lr, momentum)
    if amp_level == "O0":
        step = nn.TrainOneStepCell(nn.WithLossCell(net, workload.mscore_loss()), opt)
    else:
        manager = amp.DynamicLossScaleManager(2.0 ** 16, 2, 2000) if scaled else None
        step = amp.build_train_network(net, opt, workload.mscore_loss(), level=amp_level,
                                       cast_model_type=getattr(ms, low),
                                       loss_scale_manager=manager)
    step.set_train()
    return step, weights


def _first_losses_agree(tag, ms_loss, native_loss, low, out):
    diff = abs(ms_loss - native_loss) / max(abs(native_loss), 1e-6)
    print(f"[{tag}] first loss mscore {ms_loss:.6f} native {native_loss:.6f} (rel diff "
          f"{diff:.1e})", file=out, flush=True)
    if diff > (1e-4 if low is None else 2e-2):
        print(f"ERROR: {tag}: the losses differ; not a like-for-like comparison", file=out)
        return False
    return True


def _cycling(step, data, key, counter):
    """A no-argument function running ``step`` on the next batch (loss out)."""
    def run():
        x, y = data[counter[key] % len(data)]
        counter[key] += 1
        res = step(x, y)
        return res[0] if isinstance(res, tuple) else res
    return run


def native_torch_step(torch, workload, net, device_type, level, lr, momentum):
    """The native loop's train step of ``net`` at ``level``, returning the loss: SGD with
    momentum, ``torch.autocast`` to the level's low dtype, and ``GradScaler`` where the level
    scales the loss."""
    _, low, scaled = LEVELS[level]
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum)
    low_t = None if low is None else getattr(torch, low)
    scaler = torch.amp.GradScaler(device_type, init_scale=2.0 ** 16,
                                  growth_interval=2000) if scaled else None

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        if low_t is None:
            loss = workload.torch_loss(torch, net(x), y)
            loss.backward()
            opt.step()
            return loss
        with torch.autocast(device_type=device_type, dtype=low_t):
            loss = workload.torch_loss(torch, net(x), y)
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        return loss
    return step


def torch_comparisons(workload, args, batches, out, lr, momentum):
    """``{level: {variant: s/step}}`` of mscore[torch] (PYNATIVE) vs the native torch loop
    (``torch.autocast`` + ``GradScaler`` for O2, ``torch.autocast`` for bf16)."""
    import torch

    import mscore as ms
    if args.threads:
        torch.set_num_threads(args.threads)
    ms.set_context(backend="torch", device_target=args.device, mode=ms.PYNATIVE_MODE)
    backend = ms.context.current_backend()
    device = backend.torch_device
    ms_data = [(ms.Tensor(x), ms.Tensor(y)) for x, y in batches]
    t_data = [(torch.from_numpy(x).to(device), torch.from_numpy(y).long().to(device))
              for x, y in batches]
    results = args.results.setdefault("torch", {})
    ratios = args.results.setdefault("torch_ratios", {})
    first_calls = args.results.setdefault("torch_first_call_s", {})
    first_losses = {}
    for level in args.levels:
        _, low, scaled = LEVELS[level]
        step, weights = mscore_step(workload, ms, level, lr, momentum)
        t_net = workload.torch_net(torch).to(device)
        state = t_net.state_dict()
        with torch.no_grad():
            for name, value in weights.items():
                state[workload.torch_name(name)].copy_(torch.from_numpy(value))
        t_net.train()
        native = native_torch_step(torch, workload, t_net, device.type, level, lr, momentum)

        counter = {"ms": 0, "t": 0, "g": 0}
        fns = {}
        if args.mode in ("pynative", "both"):
            fns["mscore"] = _cycling(step, ms_data, "ms", counter)
        if args.mode in ("graph", "both"):
            graph_step, _ = mscore_step(workload, ms, level, lr, momentum)
            fns["mscore GRAPH_MODE"] = _in_graph_mode(
                ms, _cycling(graph_step, ms_data, "g", counter))
        fns["native"] = _cycling(native, t_data, "t", counter)
        native_loss = None
        for name, fn in fns.items():
            backend.synchronize()
            t0 = time.perf_counter()
            loss = fn()
            value = float(loss.item() if name == "native" else loss.asnumpy())
            first = time.perf_counter() - t0
            print(f"[torch {level}] {name} first call {first:.2f} s (trace, compile, "
                  f"warm-up)", file=out, flush=True)
            first_calls.setdefault(level, {})[name] = first
            if name == "native":
                native_loss = value
            else:
                first_losses[name] = value
        for name, value in first_losses.items():
            if not _first_losses_agree(f"torch {level} {name}", value, native_loss, low, out):
                return None
        first_losses.clear()
        med, ratio, spread = time_interleaved(fns, backend.synchronize, args)
        report(f"torch {level}", med, ratio, spread, workload.flops(), args.device, out)
        results[level] = med
        ratios[level] = ratio
    speedups(results, out)
    return results


def _in_graph_mode(ms, fn):
    """``fn`` run with the context in GRAPH_MODE (PYNATIVE again after it)."""
    def run():
        ms.set_context(mode=ms.GRAPH_MODE)
        try:
            return fn()
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)
    return run


def nest(flat):
    """``{"a.b.c": v}`` -> ``{"a": {"b": {"c": v}}}``."""
    out = {}
    for name, value in flat.items():
        node = out
        parts = name.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return out


def jax_native_step(workload, low, scaled, precision, lr, momentum):
    """The hand-written ``jax.jit`` step ``(params, state, opt_state, scale, x, y) ->
    (params, state, opt_state, scale, loss)`` (donating the first three) and its optimizer.
    With ``scaled`` the loss is scaled, the gradients unscaled and checked, and a step with
    inf/nan gradients keeps everything and halves the scale (never below 1)."""
    import jax
    import jax.numpy as jnp
    import optax
    low_dt = None if low is None else getattr(jnp, low)
    tx = optax.sgd(lr, momentum=momentum)

    def loss_fn(params, state, scale, x, y):
        logits, new_state = workload.jax_apply(params, state, x, low_dt, precision)
        loss = workload.jax_loss(logits, y)
        return (loss * scale if scaled else loss), (loss, new_state)

    def step(params, state, opt_state, scale, x, y):
        grads, (loss, new_state) = jax.grad(loss_fn, has_aux=True)(params, state, scale, x, y)
        if scaled:
            grads = jax.tree_util.tree_map(lambda g: g / scale, grads)
        updates, new_opt = tx.update(grads, opt_state, params)
        new_params = optax.apply_updates(params, updates)
        if not scaled:
            return new_params, new_state, new_opt, scale, loss
        finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(g))
                                    for g in jax.tree_util.tree_leaves(grads)]))

        def keep(new, old):
            return jax.tree_util.tree_map(lambda a, b: jnp.where(finite, a, b), new, old)
        new_scale = jnp.where(finite, scale, jnp.maximum(scale / 2.0, 1.0))
        return (keep(new_params, params), keep(new_state, state), keep(new_opt, opt_state),
                new_scale, loss)

    return jax.jit(step, donate_argnums=(0, 1, 2)), tx


def jax_comparisons(workload, args, batches, out, lr, momentum):
    """``{level: {variant: s/step}}`` of mscore[jax] in GRAPH_MODE vs the hand-written
    ``jax.jit`` + optax step."""
    import jax
    import jax.numpy as jnp

    import mscore as ms
    from mscore import dispatch
    from mscore.compile import graph

    ms.set_context(backend="jax", device_target=args.device, mode=ms.GRAPH_MODE)
    backend = dispatch.backend()
    ms_data = [(ms.Tensor(x), ms.Tensor(y)) for x, y in batches]
    jx_data = [(jax.device_put(x), jax.device_put(y)) for x, y in batches]
    results = args.results.setdefault("jax", {})
    ratios = args.results.setdefault("jax_ratios", {})
    try:
        for level in args.levels:
            _, low, scaled = LEVELS[level]
            step, weights = mscore_step(workload, ms, level, lr, momentum)
            params = nest({k: jnp.asarray(v) for k, v in weights.items()
                           if not workload.is_state(k)})
            state = nest({k: jnp.asarray(v) for k, v in weights.items()
                          if workload.is_state(k)})
            native, tx = jax_native_step(workload, low, scaled, backend.precision, lr,
                                         momentum)
            holder = {"params": params, "state": state, "opt": tx.init(params),
                      "scale": jnp.asarray(2.0 ** 16 if scaled else 1.0, jnp.float32)}

            def native_step(x, y, native=native, holder=holder):
                (holder["params"], holder["state"], holder["opt"], holder["scale"],
                 loss) = native(holder["params"], holder["state"], holder["opt"],
                                holder["scale"], x, y)
                return loss

            counter = {"ms": 0, "t": 0}
            fns = {"mscore GRAPH_MODE": _cycling(step, ms_data, "ms", counter),
                   "native": _cycling(native_step, jx_data, "t", counter)}
            traces = graph.trace_count
            if not _first_losses_agree(f"jax {level}", float(fns["mscore GRAPH_MODE"]()
                                                             .asnumpy()),
                                       float(fns["native"]()), low, out):
                return None

            def sync(holder=holder):
                jax.block_until_ready(holder["params"])
                backend.synchronize()

            med, ratio, spread = time_interleaved(fns, sync, args)
            report(f"jax {level}", med, ratio, spread, workload.flops(), args.device, out)
            print(f"[jax {level}] mscore traced {graph.trace_count - traces} program(s), all "
                  f"in the first step", file=out, flush=True)
            results[level] = med
            ratios[level] = ratio
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    speedups(results, out)
    return results


def run(workload, args, batches, out, lr=0.01, momentum=0.9):
    """Every requested backend's comparison; 0 when all ran like for like, else 2."""
    status = 0
    drivers = {"torch": torch_comparisons, "jax": jax_comparisons}
    args.results = {"flops_per_step": workload.flops(), "device": args.device,
                    "mode": args.mode}
    for name in args.backend:
        if drivers[name](workload, args, batches, out, lr, momentum) is None:
            status = 2
    if args.json:
        args.results["status"] = status
        with open(args.json, "w") as f:
            json.dump(args.results, f, indent=1, sort_keys=True)
    return status
