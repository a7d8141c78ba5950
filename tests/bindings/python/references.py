"""NumPy references for the granule kernels (kernels_src/), written from the formulas of
tests/reference/stencil_references.hpp, not from the kernel sources.

Each case makes random inputs on a small grid (sizes that are no multiple of 8) and a domain
that leaves rows and levels outside it, and returns (spec, inputs, expected): the
specialisation, the call's arguments in declaration order ({name: array or scalar}), and the
outputs it must leave ({name: array}, the whole array: outside the domain as it was).
"""

import numpy as np

CELLS, EDGES, VERTICES, LEVELS = 23, 35, 17, 6


def domain(n, levels, start=2, end_gap=3, vertical_start=1, vertical_gap=1):
    return dict(horizontal_start=start, horizontal_end=n - end_gap, vertical_start=vertical_start,
                vertical_end=levels - vertical_gap)


def box(d):
    """The domain's rows and levels as an index."""
    return slice(d["horizontal_start"], d["horizontal_end"]), slice(d["vertical_start"], d["vertical_end"])


def table(rng, rows, cols, size, missing=0.0, missing_rows=None):
    """int32 neighbour table: entries in [0, size), -1 (a missing neighbour) with probability
    `missing` in `missing_rows` (every row when None)."""
    t = rng.integers(0, size, (rows, cols)).astype(np.int32)
    holes = rng.random((rows, cols)) < missing
    if missing_rows is not None:
        holes[missing_rows:] = False
    t[holes] = -1
    return t


def neighbour_sum(tbl, coeffs, field):
    """sum_j coeffs[n, j] * field[tbl[n, j], :], skipping -1 entries: (n, levels)."""
    present = (tbl >= 0)[:, :, None]
    values = field[np.maximum(tbl, 0)] * coeffs[:, :, None]
    return np.where(present, values, 0.0).sum(axis=1)


def update_theta_and_exner(rng):
    d = domain(CELLS, LEVELS)
    inputs = dict(theta_v=rng.uniform(250, 300, (CELLS, LEVELS)), exner=rng.uniform(0.5, 1, (CELLS, LEVELS)),
                  area=rng.uniform(0.5, 2, CELLS), z_temp=rng.uniform(-1, 1, (CELLS, LEVELS)))
    rd_o_cvd = 287.04 / 717.6
    cells, levels = box(d)
    theta_v, exner = inputs["theta_v"].copy(), inputs["exner"].copy()
    th0 = theta_v[cells, levels]
    th = th0 + inputs["area"][cells, None] * inputs["z_temp"][cells, levels]
    exner[cells, levels] *= 1 + rd_o_cvd * (th / th0 - 1)
    theta_v[cells, levels] = th
    return dict(d, rd_o_cvd=rd_o_cvd), inputs, dict(theta_v=theta_v, exner=exner)


def temporary_fields_for_turbulence_diagnostics(rng):
    d = domain(CELLS, LEVELS)
    inputs = dict(kh_smag_ec=rng.uniform(0, 1, (EDGES, LEVELS)), vn=rng.uniform(-1, 1, (EDGES, LEVELS)),
                  e_bln_c_s=rng.uniform(0, 1, (CELLS, 3)), geofac_div=rng.uniform(-1, 1, (CELLS, 3)),
                  diff_multfac_smag=rng.uniform(0.5, 2, LEVELS), kh_c=rng.uniform(0, 1, (CELLS, LEVELS)),
                  div=rng.uniform(0, 1, (CELLS, LEVELS)), C2E=table(rng, CELLS, 3, EDGES))
    cells, levels = box(d)
    kh_c, div = inputs["kh_c"].copy(), inputs["div"].copy()
    div_all = neighbour_sum(inputs["C2E"], inputs["geofac_div"], inputs["vn"])
    kh_all = neighbour_sum(inputs["C2E"], inputs["e_bln_c_s"], inputs["kh_smag_ec"]) / inputs["diff_multfac_smag"]
    div[cells, levels], kh_c[cells, levels] = div_all[cells, levels], kh_all[cells, levels]
    return d, inputs, dict(kh_c=kh_c, div=div)


def apply_diffusion_to_vn(rng, limited_area):
    d = domain(EDGES, LEVELS)
    start_2nd = 6
    inputs = dict(
        u_vert=rng.uniform(-1, 1, (VERTICES, LEVELS)), v_vert=rng.uniform(-1, 1, (VERTICES, LEVELS)),
        primal_normal_vert_v1=rng.uniform(-1, 1, (EDGES, 4)), primal_normal_vert_v2=rng.uniform(-1, 1, (EDGES, 4)),
        z_nabla2_e=rng.uniform(-1, 1, (EDGES, LEVELS)), inv_vert_vert_length=rng.uniform(0.5, 2, EDGES),
        inv_primal_edge_length=rng.uniform(0.5, 2, EDGES), area_edge=rng.uniform(0.5, 2, EDGES),
        kh_smag_e=rng.uniform(0, 1, (EDGES, LEVELS)), diff_multfac_vn=rng.uniform(0, 1, LEVELS),
        nudgecoeff_e=rng.uniform(0, 1, EDGES), vn=rng.uniform(-1, 1, (EDGES, LEVELS)),
        nudgezone_diff=0.3, fac_bdydiff_v=0.7,
        E2C2V=table(rng, EDGES, 4, VERTICES, missing=0.3, missing_rows=start_2nd))
    e2c2v, z2 = inputs["E2C2V"], inputs["z_nabla2_e"]
    term = [np.where((e2c2v[:, j] >= 0)[:, None],
                     inputs["u_vert"][np.maximum(e2c2v[:, j], 0)] * inputs["primal_normal_vert_v1"][:, j, None] +
                     inputs["v_vert"][np.maximum(e2c2v[:, j], 0)] * inputs["primal_normal_vert_v2"][:, j, None], 0.0)
            for j in range(4)]
    tangential, normal = term[0] + term[1], term[2] + term[3]
    ivv, ipe = inputs["inv_vert_vert_length"][:, None], inputs["inv_primal_edge_length"][:, None]
    nabla4 = 4 * ((normal - 2 * z2) * ivv * ivv + (tangential - 2 * z2) * ipe * ipe)
    area, multfac = inputs["area_edge"][:, None], inputs["diff_multfac_vn"][None, :]
    if limited_area:
        kh = np.maximum(0.3 * inputs["nudgecoeff_e"][:, None], inputs["kh_smag_e"])
        inner = area * (kh * z2 - area * multfac * nabla4)
        boundary = area * 0.7 * z2
    else:
        inner = area * (inputs["kh_smag_e"] * z2 - multfac * nabla4 * area)
        boundary = np.zeros_like(z2)
    increment = np.where((np.arange(EDGES) >= start_2nd)[:, None], inner, boundary)
    edges, levels = box(d)
    vn = inputs["vn"].copy()
    vn[edges, levels] += increment[edges, levels]
    spec = dict(d, start_2nd_nudge_line_idx_e=start_2nd, limited_area=limited_area)
    return spec, inputs, dict(vn=vn)


def apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence(rng):
    d = domain(CELLS, LEVELS, start=1, end_gap=1, vertical_start=0)
    interior_idx, halo_idx, nrdmax = 4, 19, 3
    c2e2co = table(rng, CELLS, 4, CELLS, missing=0.2)
    c2e2co[:, 0] = np.arange(CELLS)  # the cell itself, then its neighbours
    inputs = dict(area=rng.uniform(0.5, 2, CELLS), geofac_n2s=rng.uniform(-1, 1, (CELLS, 4)),
                  geofac_grg_x=rng.uniform(-1, 1, (CELLS, 4)), geofac_grg_y=rng.uniform(-1, 1, (CELLS, 4)),
                  w_old=rng.uniform(-1, 1, (CELLS, LEVELS)), w=rng.uniform(-1, 1, (CELLS, LEVELS)),
                  dwdx=rng.uniform(-1, 1, (CELLS, LEVELS)), dwdy=rng.uniform(-1, 1, (CELLS, LEVELS)),
                  diff_multfac_w=0.05, diff_multfac_n2w=rng.uniform(0, 1, LEVELS), C2E2CO=c2e2co)
    w_old, area = inputs["w_old"], inputs["area"][:, None]
    z_nabla2 = neighbour_sum(c2e2co, inputs["geofac_n2s"], w_old)
    nabla4 = neighbour_sum(c2e2co, inputs["geofac_n2s"], z_nabla2)
    diffused = w_old - 0.05 * area * area * nabla4
    damping = ((np.arange(LEVELS) > 0) & (np.arange(LEVELS) < nrdmax))[None, :]
    diffused = np.where(damping, diffused + inputs["diff_multfac_n2w"][None, :] * area * z_nabla2, diffused)
    interior = ((np.arange(CELLS) >= interior_idx) & (np.arange(CELLS) < halo_idx))[:, None]
    cells, levels = box(d)
    w, dwdx, dwdy = inputs["w"].copy(), inputs["dwdx"].copy(), inputs["dwdy"].copy()
    w[cells, levels] = np.where(interior, diffused, w_old)[cells, levels]
    below_top = slice(max(d["vertical_start"], 1), d["vertical_end"])  # level 0 has no gradient
    dwdx[cells, below_top] = neighbour_sum(c2e2co, inputs["geofac_grg_x"], w_old)[cells, below_top]
    dwdy[cells, below_top] = neighbour_sum(c2e2co, inputs["geofac_grg_y"], w_old)[cells, below_top]
    spec = dict(d, type_shear=2, nrdmax=nrdmax, interior_idx=interior_idx, halo_idx=halo_idx)
    return spec, inputs, dict(w=w, dwdx=dwdx, dwdy=dwdy)


def mo_intp_rbf_rbf_vec_interpol_vertex(rng):
    d = domain(VERTICES, LEVELS)
    inputs = dict(p_e_in=rng.uniform(-1, 1, (EDGES, LEVELS)), ptr_coeff_1=rng.uniform(-1, 1, (VERTICES, 6)),
                  ptr_coeff_2=rng.uniform(-1, 1, (VERTICES, 6)), p_u_out=rng.uniform(-1, 1, (VERTICES, LEVELS)),
                  p_v_out=rng.uniform(-1, 1, (VERTICES, LEVELS)),
                  V2E=table(rng, VERTICES, 6, EDGES, missing=0.2))
    vertices, levels = box(d)
    u, v = inputs["p_u_out"].copy(), inputs["p_v_out"].copy()
    u[vertices, levels] = neighbour_sum(inputs["V2E"], inputs["ptr_coeff_1"], inputs["p_e_in"])[vertices, levels]
    v[vertices, levels] = neighbour_sum(inputs["V2E"], inputs["ptr_coeff_2"], inputs["p_e_in"])[vertices, levels]
    return d, inputs, dict(p_u_out=u, p_v_out=v)


def solve_tridiagonal_matrix_for_w(rng):
    d = domain(CELLS, LEVELS, vertical_start=1, vertical_gap=0)
    inputs = dict(vwind_impl_wgt=rng.uniform(0.5, 1, CELLS), theta_v_ic=rng.uniform(250, 300, (CELLS, LEVELS)),
                  ddqz_z_half=rng.uniform(50, 500, (CELLS, LEVELS)), z_alpha=rng.uniform(0, 1, (CELLS, LEVELS + 1)),
                  z_beta=rng.uniform(0, 1, (CELLS, LEVELS)), z_w_expl=rng.uniform(-1, 1, (CELLS, LEVELS + 1)),
                  z_exner_expl=rng.uniform(-1, 1, (CELLS, LEVELS)), z_q=rng.uniform(-1, 1, (CELLS, LEVELS)),
                  w=rng.uniform(-1, 1, (CELLS, LEVELS)), dtime=0.9, cpd=1004.64)
    cells, _ = box(d)
    g_ = {name: inputs[name] for name in ("theta_v_ic", "ddqz_z_half", "z_alpha", "z_beta", "z_w_expl", "z_exner_expl")}
    z_q, w = inputs["z_q"].copy(), inputs["w"].copy()
    cq = dw = np.zeros(cells.stop - cells.start)
    for k in range(d["vertical_start"], d["vertical_end"]):
        g = 0.9 * 1004.64 * inputs["vwind_impl_wgt"][cells] * g_["theta_v_ic"][cells, k] / g_["ddqz_z_half"][cells, k]
        a = -g * g_["z_beta"][cells, k - 1] * g_["z_alpha"][cells, k - 1]
        upper = -g * g_["z_beta"][cells, k] * g_["z_alpha"][cells, k + 1]
        b = 1 + g * g_["z_alpha"][cells, k] * (g_["z_beta"][cells, k - 1] + g_["z_beta"][cells, k])
        rhs = g_["z_w_expl"][cells, k] - g * (g_["z_exner_expl"][cells, k - 1] - g_["z_exner_expl"][cells, k])
        normalisation = 1 / (b + a * cq)
        cq, dw = -upper * normalisation, (rhs - a * dw) * normalisation
        z_q[cells, k], w[cells, k] = cq, dw
    s = np.zeros_like(cq)
    for k in reversed(range(d["vertical_start"], d["vertical_end"])):
        s = w[cells, k] + s * z_q[cells, k]
        w[cells, k] = s
    return d, inputs, dict(z_q=z_q, w=w)


def interpolate_cell_field_to_half_levels(rng):
    d = domain(CELLS, LEVELS, vertical_start=1)
    inputs = dict(wgtfac_c=rng.uniform(0, 1, (CELLS, LEVELS)), interpolant=rng.uniform(-1, 1, (CELLS, LEVELS)),
                  interpolation_to_half_levels=rng.uniform(-1, 1, (CELLS, LEVELS)))
    cells, levels = box(d)
    wgt, x = inputs["wgtfac_c"], inputs["interpolant"]
    out = inputs["interpolation_to_half_levels"].copy()
    below = slice(levels.start - 1, levels.stop - 1)
    out[cells, levels] = wgt[cells, levels] * x[cells, levels] + (1 - wgt[cells, levels]) * x[cells, below]
    return d, inputs, dict(interpolation_to_half_levels=out)


def stencil7(rng):
    nz, ny, nx = 5, 6, 9
    c = dict(c0=0.5, cx=0.1, cy=0.15, cz=0.05)
    inputs = {"in": rng.uniform(-1, 1, (nz, ny, nx)), "out": rng.uniform(-1, 1, (nz, ny, nx))}
    x, out = inputs["in"], inputs["out"].copy()
    i = (slice(1, -1),) * 3
    out[i] = (c["c0"] * x[i] + c["cx"] * (x[1:-1, 1:-1, :-2] + x[1:-1, 1:-1, 2:]) +
              c["cy"] * (x[1:-1, :-2, 1:-1] + x[1:-1, 2:, 1:-1]) + c["cz"] * (x[:-2, 1:-1, 1:-1] + x[2:, 1:-1, 1:-1]))
    return dict(c, nx=nx, ny=ny, nz=nz), inputs, dict(out=out)


# (test id, kernel, case): every granule kernel, apply_diffusion_to_vn on both kinds of grid.
CASES = [
    ("update_theta_and_exner", "update_theta_and_exner", update_theta_and_exner),
    ("temporary_fields", "temporary_fields_for_turbulence_diagnostics", temporary_fields_for_turbulence_diagnostics),
    ("vn_limited_area", "apply_diffusion_to_vn", lambda rng: apply_diffusion_to_vn(rng, True)),
    ("vn_global", "apply_diffusion_to_vn", lambda rng: apply_diffusion_to_vn(rng, False)),
    ("w", "apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence",
     apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence),
    ("rbf", "mo_intp_rbf_rbf_vec_interpol_vertex", mo_intp_rbf_rbf_vec_interpol_vertex),
    ("tridiagonal", "solve_tridiagonal_matrix_for_w", solve_tridiagonal_matrix_for_w),
    ("interpolate", "interpolate_cell_field_to_half_levels", interpolate_cell_field_to_half_levels),
    ("stencil7", "stencil7", stencil7),
]
