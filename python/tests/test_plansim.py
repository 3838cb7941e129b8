"""test_plansim.py: the Python module (python/plansim) against the plansim
program: each function's JSON is the program's byte for byte, but for
sim_wall_s (the replay's own time, different each run); errors carry the
program's message and exit status. Run by tests/python.sh in make check,
with $PLANSIM the program and $PLANSIM_LIBRARY the library of the same
build."""

import json
import os
import subprocess
import sys

import pytest

import plansim

PLANSIM = os.environ["PLANSIM"]

# a small plan that runs in well under a second: Llama 3 8B on one DGX
# H100 node
SMALL = {"model": "llama3-8b", "cluster": "dgx-h100", "nodes": 1}


def cli(*args):
    """The program's stdout, stderr and exit status for `args`."""
    p = subprocess.run([PLANSIM, *args], capture_output=True, text=True, check=False)
    return p.stdout, p.stderr, p.returncode


def flags(request):
    """`request` as the program's flags, as the library reads it (plansim.h)."""
    out = []
    for key, value in request.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        elif isinstance(value, list):
            out.append("%s=%s" % (flag, ",".join(str(v) for v in value)))
        else:
            out.append("%s=%s" % (flag, value))
    return out


def without_wall(text):
    return "".join(line for line in text.splitlines(True) if '"sim_wall_s"' not in line)


def library_text(command, request, cancel=None):
    return plansim._call(command, request, cancel)


@pytest.mark.parametrize("request_", [{}, dict(SMALL, tp=2, micro_batch_size=2,
                                               sequence_parallel=True, recompute="selective")])
def test_simulate_is_the_programs_json(request_):
    out, _, status = cli("simulate", "--format", "json", *flags(request_))
    assert status == 0
    text = library_text("simulate", request_)
    assert without_wall(text) == without_wall(out)
    assert text.count('"sim_wall_s"') == 1
    assert plansim.simulate(**request_)["step_time_s"] == json.loads(out)["step_time_s"]


def test_sweep_is_the_programs_rows():
    request = dict(SMALL, space="grid", tp=[1, 2, 4], pp=[1, 2], threads=1)
    out, _, status = cli("sweep", "-o", "-", "--format", "json", *flags(request))
    assert status == 0
    assert library_text("sweep", request) == out
    rows = plansim.sweep(**request, frame=False)
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert rows[0]["tokens_per_s"] >= rows[-1]["tokens_per_s"]
    # by default a DataFrame where pandas is installed, else the same rows
    default = plansim.sweep(**request)
    try:
        import pandas
    except ImportError:
        assert default == rows
    else:
        assert isinstance(default, pandas.DataFrame)
        assert default.to_dict("records") == rows


def test_run_is_the_programs_json():
    request = dict(SMALL, tp=2, pp=2, tokens="100B", trials=10)
    out, _, status = cli("run", "--format", "json", *flags(request))
    assert status == 0
    assert without_wall(library_text("run", request)) == without_wall(out)
    assert "days" in json.dumps(plansim.run(**request))


def test_collective_is_the_programs_json():
    request = {"op": "all_gather", "ranks": 16, "cluster": "dgx-h100", "nodes": 2}
    out, _, status = cli("collective", "--format", "json", *flags(request))
    assert status == 0
    assert library_text("collective", request) == out
    assert plansim.collective(**request) == json.loads(out)


def test_errors_are_the_programs():
    # tp 3 does not divide Llama 3 8B's 32 heads: bad input
    request = dict(SMALL, tp=3)
    _, err, status = cli("simulate", *flags(request))
    with pytest.raises(plansim.Error) as e:
        plansim.simulate(**request)
    assert e.value.status == status == 2
    assert "plansim: " + e.value.message == err.splitlines()[-1]


def test_no_fit_is_status_3():
    # GPT-3 175B's weights alone outgrow one 8-GPU node at tp 1
    request = {"model": "gpt3-175b", "cluster": "dgx-h100", "nodes": 1, "space": "grid",
               "tp": 1, "pp": 1, "zero_stage": 0}
    _, _, status = cli("sweep", *flags(request))
    with pytest.raises(plansim.Error) as e:
        plansim.sweep(**request)
    assert e.value.status == status == 3


def test_cancelled_sweep():
    token = plansim.Cancel()
    token.cancel()
    with pytest.raises(plansim.Error) as e:
        plansim.sweep(cancel=token, **SMALL)
    assert e.value.status == 130


def test_version_is_the_programs():
    out, _, _ = cli("--version")
    assert out == "plansim %s\n" % plansim.version()


def test_step_time_from_the_build_tree():
    """The one-liner of docs/python.md, as a user runs it."""
    python_dir = os.path.dirname(os.path.dirname(plansim.__file__))
    env = dict(os.environ, PYTHONPATH=python_dir)
    p = subprocess.run([sys.executable, "-c",
                        'import plansim; print(plansim.simulate()["step_time_s"])'],
                       capture_output=True, text=True, env=env, check=True)
    out, _, _ = cli("simulate", "--format", "json")
    assert float(p.stdout) == json.loads(out)["step_time_s"]


def test_frame():
    pandas = pytest.importorskip("pandas")
    frame = plansim.sweep(frame=True, space="grid", tp=[1, 2], pp=[1, 2], threads=1, **SMALL)
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame["rank"]) == list(range(1, len(frame) + 1))
