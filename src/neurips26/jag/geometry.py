"""Batched pinhole geometry in torch, exactly the conventions of :class:`neurips26.world.Camera`.

The chapter's model, memory and metrics move between pixels and the room many frames at a time, on any
device and with gradients, so they need torch versions of the world's NumPy camera. The conventions are
the world's (``neurips26.world.camera``):

* a pose is the camera-to-world 4x4 ``c2w = [[R, t], [0, 1]]`` (OpenCV axes: columns of ``R`` are the
  camera's right, down and forward directions, ``t`` is the camera centre);
* pixel ``(i, j)`` (row, column) has its centre at ``(u, v) = (j + ½, i + ½)``;
* depth is the **z-depth** ``D`` along the optical axis;
* ``K = [[f_x, s, c_x], [0, f_y, c_y], [0, 0, 1]]`` (the world's cameras have skew ``s = 0``), and
  :func:`intrinsics` is the world's ``pinhole``: ``f = (W/2) / tan(fov/2)``, ``(c_x, c_y) = (W/2, H/2)``.

Unprojection (issue 23; with the world-to-camera ``[R_w | t_w] = [Rᵀ | −Rᵀ t]`` it reads
``X = R_wᵀ (D K⁻¹ [u, v, 1]ᵀ − t_w)``) is, in camera-to-world form,

    X = R (D K⁻¹ [u, v, 1]ᵀ) + t,                                                    (G1)

and projection inverts it: ``x_c = Rᵀ (X − t)``, ``[u, v, 1]ᵀ ∝ K x_c``, ``z = x_c,z``.            (G2)

Camera conditioning uses Plücker rays (Plücker 1865; as in camera-controlled video models): the ray
through pixel ``(u, v)`` has unit world direction ``d = R K⁻¹[u, v, 1]ᵀ / ‖·‖`` and origin ``o = t``, and
is encoded as ``(d, o × d)`` (G3), which does not depend on the point chosen on the ray and satisfies
``d · (o × d) = 0``. :func:`plucker_patches` evaluates it at every patch centre, in the token order of
:class:`neurips26.nn.PatchEmbedding` (row-major over patches).

What is here: :func:`intrinsics`, :func:`check_pose`, :func:`check_intrinsics`, :func:`pixel_grid`,
:func:`unproject`, :func:`project`, :func:`plucker_patches`.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from neurips26.validation import check_float, check_int

#: Tolerance of :func:`check_pose` on ``RᵀR = I``, ``det R = 1`` and the last row (float32 poses pass).
POSE_ATOL = 1e-4


def intrinsics(
    width: int,
    height: int,
    fov_deg: float,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> Tensor:
    """The 3x3 ``K`` of ``neurips26.world.pinhole(width, height, fov_deg)``: horizontal field of view,
    square pixels, principal point at the image centre."""
    width = check_int("width", width, minimum=1)
    height = check_int("height", height, minimum=1)
    fov = check_float("fov_deg", fov_deg, minimum=0.0, strict_min=True)
    if fov >= 180.0:
        raise ValueError(f"fov_deg must be < 180; got {fov}")
    f = (width / 2.0) / math.tan(math.radians(fov) / 2.0)
    return torch.tensor(
        [[f, 0.0, width / 2.0], [0.0, f, height / 2.0], [0.0, 0.0, 1.0]], dtype=dtype, device=device
    )


def check_pose(c2w: object, name: str = "pose", *, atol: float = POSE_ATOL) -> Tensor:
    """Camera-to-world poses ``(..., 4, 4)`` (or ``(..., 3, 4)``, completed with the row ``(0, 0, 0, 1)``).

    ``ValueError`` naming ``name`` unless every pose is finite, its rotation is orthonormal with
    determinant +1 and its last row is ``(0, 0, 0, 1)`` (to ``atol``); ``TypeError`` for a non-tensor.
    """
    if not isinstance(c2w, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(c2w).__name__}")
    if not c2w.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor; got {c2w.dtype}")
    if c2w.ndim < 2 or c2w.shape[-1] != 4 or c2w.shape[-2] not in (3, 4):
        raise ValueError(f"{name} must have shape (..., 4, 4) or (..., 3, 4); got {tuple(c2w.shape)}")
    if not bool(torch.isfinite(c2w).all()):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    if c2w.shape[-2] == 3:
        bottom = torch.zeros(*c2w.shape[:-2], 1, 4, dtype=c2w.dtype, device=c2w.device)
        bottom[..., 0, 3] = 1.0
        c2w = torch.cat([c2w, bottom], dim=-2)
    r = c2w[..., :3, :3].detach()
    eye = torch.eye(3, dtype=r.dtype, device=r.device)
    last = torch.tensor([0.0, 0.0, 0.0, 1.0], dtype=r.dtype, device=r.device)
    if not bool(((r.mT @ r - eye).abs() <= atol).all()) or not bool((torch.linalg.det(r) > 0).all()):
        raise ValueError(f"{name} must hold a rotation (orthonormal, det +1) in its top-left 3x3 block")
    if not bool(((c2w[..., 3, :].detach() - last).abs() <= atol).all()):
        raise ValueError(f"{name} must have last row (0, 0, 0, 1)")
    return c2w


def check_intrinsics(K: object, batch: int | None = None, name: str = "K") -> Tensor:  # noqa: N803
    """Intrinsics ``(3, 3)`` or ``(batch, 3, 3)``, upper triangular with ``K[2] = (0, 0, 1)`` and
    ``f_x, f_y > 0``; returned as ``(batch or 1, 3, 3)``."""
    if not isinstance(K, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(K).__name__}")
    if not K.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor; got {K.dtype}")
    if K.shape[-2:] != (3, 3) or K.ndim not in (2, 3) or (K.ndim == 3 and K.shape[0] not in (1, batch)):
        raise ValueError(f"{name} must have shape (3, 3) or ({batch}, 3, 3); got {tuple(K.shape)}")
    k = K.detach()
    last = torch.tensor([0.0, 0.0, 1.0], dtype=k.dtype, device=k.device)
    ok = (
        bool(torch.isfinite(k).all())
        and bool((k[..., 2, :] == last).all())
        and bool((k[..., 1, 0] == 0).all())
    )
    if not ok or not bool((k[..., 0, 0] > 0).all() and (k[..., 1, 1] > 0).all()):
        raise ValueError(f"{name} must be finite [[fx, s, cx], [0, fy, cy], [0, 0, 1]] with fx, fy > 0")
    return K if K.ndim == 3 else K[None]


def _batch_of(c2w: Tensor) -> int:
    if c2w.ndim != 3:
        raise ValueError(f"pose must have shape (B, 4, 4) or (B, 3, 4); got {tuple(c2w.shape)}")
    return c2w.shape[0]


def pixel_grid(
    height: int, width: int, *, dtype: torch.dtype = torch.float64, device: torch.device | str | None = None
) -> Tensor:
    """Pixel centres ``(H, W, 2)``: ``[..., 0] = u = j + ½`` (column), ``[..., 1] = v = i + ½`` (row)."""
    height = check_int("height", height, minimum=1)
    width = check_int("width", width, minimum=1)
    u = torch.arange(width, dtype=dtype, device=device) + 0.5
    v = torch.arange(height, dtype=dtype, device=device) + 0.5
    return torch.stack(torch.broadcast_tensors(u[None, :], v[:, None]), dim=-1)


def _camera_plane(uv: Tensor, K: Tensor) -> tuple[Tensor, Tensor]:  # noqa: N803
    """``K⁻¹ [u, v, 1]ᵀ`` as ``(x, y)`` at ``z = 1``; ``uv`` (B, N, 2), ``K`` (B or 1, 3, 3)."""
    fx, s, cx = K[:, 0, 0, None], K[:, 0, 1, None], K[:, 0, 2, None]
    fy, cy = K[:, 1, 1, None], K[:, 1, 2, None]
    y = (uv[..., 1] - cy) / fy
    x = (uv[..., 0] - cx - s * y) / fx
    return x, y


def unproject(depth: Tensor, c2w: Tensor, K: Tensor) -> Tensor:  # noqa: N803
    """World points ``(B, H, W, 3)`` of every pixel centre from z-depth ``(B, H, W)`` (eq. G1).

    ``c2w`` (B, 4, 4) or (B, 3, 4); ``K`` (3, 3) or (B, 3, 3). Depth must be finite and > 0
    (``ValueError`` naming ``depth``); mask invalid pixels to a positive value before calling.
    Differentiable in ``depth``, ``c2w`` and ``K``.
    """
    c2w = check_pose(c2w)
    batch = _batch_of(c2w)
    K = check_intrinsics(K, batch)  # noqa: N806
    if not isinstance(depth, Tensor):
        raise TypeError(f"depth must be a torch.Tensor; got {type(depth).__name__}")
    if depth.ndim != 3 or depth.shape[0] != batch:
        raise ValueError(f"depth must have shape ({batch}, H, W); got {tuple(depth.shape)}")
    if not bool((torch.isfinite(depth) & (depth > 0)).all()):
        raise ValueError("depth must be finite and > 0 everywhere (mask invalid pixels first)")
    _, height, width = depth.shape
    dt = torch.promote_types(depth.dtype, c2w.dtype)
    uv = pixel_grid(height, width, dtype=dt, device=depth.device).reshape(1, -1, 2)
    x, y = _camera_plane(uv, K.to(dt))
    d = depth.reshape(batch, -1).to(dt)
    cam = torch.stack([x * d, y * d, d], dim=-1)  # (B, N, 3) camera frame, D K⁻¹ [u, v, 1]
    c2w = c2w.to(dt)
    world = cam @ c2w[:, :3, :3].mT + c2w[:, None, :3, 3]
    return world.reshape(batch, height, width, 3)


def project(points: Tensor, c2w: Tensor, K: Tensor) -> tuple[Tensor, Tensor]:  # noqa: N803
    """World points ``(B, ..., 3)`` to pixel coordinates ``(B, ..., 2)`` and z-depth ``(B, ...)`` (eq. G2).

    Like ``Camera.project``: points with ``z <= 0`` (behind the camera) get ``uv = NaN``; the gradient
    stays finite there (the division uses a safe denominator).
    """
    c2w = check_pose(c2w)
    batch = _batch_of(c2w)
    K = check_intrinsics(K, batch)  # noqa: N806
    if not isinstance(points, Tensor):
        raise TypeError(f"points must be a torch.Tensor; got {type(points).__name__}")
    if points.ndim < 2 or points.shape[0] != batch or points.shape[-1] != 3:
        raise ValueError(f"points must have shape ({batch}, ..., 3); got {tuple(points.shape)}")
    lead = points.shape[:-1]
    dt = torch.promote_types(points.dtype, c2w.dtype)
    p = points.reshape(batch, -1, 3).to(dt)
    c2w, K = c2w.to(dt), K.to(dt)  # noqa: N806
    cam = (p - c2w[:, None, :3, 3]) @ c2w[:, :3, :3]  # Rᵀ (X − t) in row-vector form
    x, y, z = cam.unbind(-1)
    front = z > 0
    safe = torch.where(front, z, torch.ones_like(z))
    xn, yn = x / safe, y / safe
    u = K[:, 0, 0, None] * xn + K[:, 0, 1, None] * yn + K[:, 0, 2, None]
    v = K[:, 1, 1, None] * yn + K[:, 1, 2, None]
    uv = torch.where(front[..., None], torch.stack([u, v], dim=-1), torch.full_like(cam[..., :2], math.nan))
    return uv.reshape(*lead, 2), z.reshape(lead)


def plucker_patches(c2w: Tensor, K: Tensor, height: int, width: int, patch_size: int) -> Tensor:  # noqa: N803
    """Plücker rays ``(d, o × d)`` with unit ``d`` through every patch centre, ``(B, n_patches, 6)`` (eq. G3).

    Patches of ``patch_size`` pixels tile the ``height x width`` image (``ValueError`` naming
    ``patch_size`` if it does not divide both); patch ``(r, c)`` has its centre at
    ``(u, v) = (c p + p/2, r p + p/2)`` and index ``r (W/p) + c``, the token order of ``PatchEmbedding``.
    With ``patch_size = 1`` this is ``Camera.plucker`` at every pixel.
    """
    c2w = check_pose(c2w)
    batch = _batch_of(c2w)
    K = check_intrinsics(K, batch)  # noqa: N806
    height = check_int("height", height, minimum=1)
    width = check_int("width", width, minimum=1)
    p = check_int("patch_size", patch_size, minimum=1)
    if height % p or width % p:
        raise ValueError(f"patch_size {p} must divide the image size ({height}, {width})")
    dt = c2w.dtype
    uv = pixel_grid(height // p, width // p, dtype=dt, device=c2w.device).reshape(1, -1, 2) * p
    x, y = _camera_plane(uv, K.to(dt))
    d_cam = torch.stack([x, y, torch.ones_like(x)], dim=-1).expand(batch, -1, -1)
    d = d_cam @ c2w[:, :3, :3].mT
    d = d / torch.linalg.vector_norm(d, dim=-1, keepdim=True)
    o = c2w[:, None, :3, 3].expand_as(d)
    return torch.cat([d, torch.linalg.cross(o, d, dim=-1)], dim=-1)


__all__ = [
    "POSE_ATOL",
    "check_intrinsics",
    "check_pose",
    "intrinsics",
    "pixel_grid",
    "plucker_patches",
    "project",
    "unproject",
]
