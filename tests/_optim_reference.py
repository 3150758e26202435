"""Independent numpy implementations of the optimizers' documented update rules (one
parameter at a time, float64), for ``tests/test_nn_optim_reference.py``.

Each ``make_<name>(**options)`` returns ``update(p, g, state, lr, t) -> (p, state)`` where
``g`` already includes the weight decay, ``t`` is the step number (1 first) and ``state`` is
None before the first step. LARS and Lamb work on the whole parameter (norms); the others
are elementwise.

:func:`step_gradients` and :func:`run_steps` are the fixed gradients both optimizer test
modules (``test_nn_optim``, ``test_nn_optim_reference``) feed an optimizer, step by step.
"""
import numpy as np

import mscore as ms

f32 = np.float32
STEPS = 3   # the steps an optimizer runs in a comparison, unless a test says otherwise


def step_gradients(step, params, dtype=np.float64):
    """The gradients of step ``step`` (0 first) for ``params``: standard normal numbers of
    their shapes in ``dtype``, the same on every call."""
    rng = np.random.default_rng(100 + step)
    return [rng.standard_normal(p.shape).astype(dtype) for p in params]


def run_steps(opt, params, steps=STEPS, scale=1.0):
    """Apply ``opt`` to :func:`step_gradients` (times ``scale``) ``steps`` times; the
    parameters' values after, as numpy arrays."""
    for s in range(steps):
        opt(tuple(ms.Tensor(g * scale) for g in step_gradients(s, params)))
    return [p.asnumpy() for p in params]


def beta_power(beta, t):
    """``beta ** t`` as MindSpore accumulates it: a float32 state multiplied once a step."""
    out = f32(1.0)
    for _ in range(t):
        out = f32(out * f32(beta))
    return out


def make_adagrad(accum=0.1, update_slots=True):
    def update(p, g, a, lr, t):
        a = np.full_like(p, accum) if a is None else a
        if update_slots:
            a = a + g * g
        return p - lr * g / np.sqrt(a), a
    return update


def make_adadelta(rho=0.9, epsilon=1e-6):
    def update(p, g, st, lr, t):
        acc, upd = (np.zeros_like(p), np.zeros_like(p)) if st is None else st
        acc = rho * acc + (1 - rho) * g * g
        delta = np.sqrt(upd + epsilon) / np.sqrt(acc + epsilon) * g
        upd = rho * upd + (1 - rho) * delta * delta
        return p - lr * delta, (acc, upd)
    return update


def make_adamax(beta1=0.9, beta2=0.999, eps=1e-8):
    def update(p, g, st, lr, t):
        m, v = (np.zeros_like(p), np.zeros_like(p)) if st is None else st
        m = beta1 * m + (1 - beta1) * g
        v = np.maximum(beta2 * v, np.abs(g))
        rate = float(f32(lr)) / float(f32(1.0) - beta_power(beta1, t))  # float32 power
        return p - rate * m / (v + eps), (m, v)
    return update


def make_asgd(lambd=1e-4, alpha=0.75, t0=1e6):
    """Computed in float32, as MindSpore's ASGD casts everything to float32."""
    lambd, alpha, t0 = f32(lambd), f32(alpha), f32(t0)

    def update(p, g, st, lr, t):
        lr = f32(lr)
        eta, mu, ax = (lr, f32(1.0), np.zeros(p.shape, f32)) if st is None else st
        p32 = p.astype(f32) * (f32(1.0) - lambd * eta) - eta * g.astype(f32)
        ax = p32.copy() if mu == 1 else ax + (p32 - ax) * mu
        eta = lr / (f32(1.0) + lambd * lr * f32(t)) ** alpha
        mu = f32(1.0) / max(f32(1.0), f32(t) - t0)
        return p32.astype(p.dtype), (eta, mu, ax)
    return update


def make_ftrl(initial_accum=0.1, lr_power=-0.5, l1=0.0, l2=0.0):
    def update(p, g, st, lr, t):
        n, z = (np.full_like(p, initial_accum), np.zeros_like(p)) if st is None else st
        n_new = n + g * g
        sigma = (n_new ** -lr_power - n ** -lr_power) / lr
        z = z + g - sigma * p
        p = np.where(np.abs(z) > l1,
                     (l1 * np.sign(z) - z) / (n_new ** -lr_power / lr + 2 * l2), 0.0)
        return p, (n_new, z)
    return update


def make_proximal_adagrad(accum=0.1, l1=0.0, l2=0.0):
    def update(p, g, a, lr, t):
        a = (np.full_like(p, accum) if a is None else a) + g * g
        rate = lr / np.sqrt(a)
        v = p - rate * g
        return np.sign(v) * np.maximum(np.abs(v) - rate * l1, 0) / (1 + rate * l2), a
    return update


def make_rmsprop(decay=0.9, momentum=0.0, epsilon=1e-10, centered=False):
    def update(p, g, st, lr, t):
        ms, mom, mg = (np.ones_like(p), np.zeros_like(p), np.zeros_like(p)) if st is None \
            else st
        ms = decay * ms + (1 - decay) * g * g
        denom = ms
        if centered:
            mg = decay * mg + (1 - decay) * g
            denom = ms - mg * mg
        mom = momentum * mom + lr * g / np.sqrt(denom + epsilon)
        return p - mom, (ms, mom, mg)
    return update


def make_rprop(etas=(0.5, 1.2), step_sizes=(1e-6, 50.0)):
    etaminus, etaplus = etas
    lo, hi = step_sizes

    def update(p, g, st, lr, t):
        prev, size = (np.zeros_like(p), np.full_like(p, lr)) if st is None else st
        prod = g * prev
        factor = np.where(prod > 0, etaplus, np.where(prod < 0, etaminus, 1.0))
        size = np.clip(size * factor, lo, hi)
        g = np.where(prod < 0, 0.0, g)      # a sign flip skips the step and is forgotten
        return p - np.sign(g) * size, (g, size)
    return update


def make_adam(beta1=0.9, beta2=0.999, eps=1e-8, use_nesterov=False, use_amsgrad=False):
    def update(p, g, st, lr, t):
        m, v, vmax = (np.zeros_like(p),) * 3 if st is None else st
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        vmax = np.maximum(vmax, v) if use_amsgrad else v
        corr = f32(np.sqrt(f32(1.0) - beta_power(beta2, t)) / (f32(1.0) - beta_power(beta1, t)))
        lr_t = float(f32(f32(lr) * corr))                                # float32 scalars
        num = beta1 * m + (1 - beta1) * g if use_nesterov else m
        return p - lr_t * num / (np.sqrt(vmax) + eps), (m, v, vmax)
    return update


def make_lamb(beta1=0.9, beta2=0.999, eps=1e-6, weight_decay=0.0):
    """``g`` here is the raw gradient: LAMB adds its weight decay to the update itself."""
    def update(p, g, st, lr, t):
        m, v = (np.zeros_like(p),) * 2 if st is None else st
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        c1 = float(f32(1.0) - f32(f32(beta1) ** f32(t)))   # float32 bias corrections
        c2 = float(f32(1.0) - f32(f32(beta2) ** f32(t)))
        r = (m / c1) / (np.sqrt(v / c2) + eps) + weight_decay * p
        w_norm, r_norm = np.linalg.norm(p), np.linalg.norm(r)
        ratio = w_norm / r_norm if w_norm > 0 and r_norm > 0 else 1.0
        return p - lr * ratio * r, (m, v)
    return update


def lars_gradient(p, g, weight_decay, coefficient, epsilon, use_clip=False, lr=None):
    """The gradient LARS hands to the wrapped optimizer for one parameter."""
    w_norm, g_norm = np.linalg.norm(p), np.linalg.norm(g)
    coeff = coefficient * w_norm / (g_norm + weight_decay * w_norm + epsilon)
    if use_clip:
        coeff = min(max(coeff / lr, 0.0), 1.0)
    return coeff * (g + weight_decay * p)


def make_momentum(momentum=0.9):
    def update(p, g, v, lr, t):
        v = (np.zeros_like(p) if v is None else v) * momentum + g
        return p - lr * v, v
    return update
