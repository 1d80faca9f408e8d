"""--dist loadgroup really sends a group's tests to one worker (it once silently did not: pytest-xdist 3.8 under
pytest 9 named no group, and every shared fixture was built on both workers). A small suite runs on two workers;
each test writes the worker it ran on."""
import json
import os
import subprocess
import sys
import textwrap


def test_the_tests_of_one_xdist_group_run_on_one_worker(tmp_path):
    out = tmp_path / "ran"
    out.mkdir()
    (tmp_path / "test_grouped.py").write_text(textwrap.dedent(f'''
        import os, pytest
        OUT = {str(out)!r}

        def _note(name):
            with open(os.path.join(OUT, name), "w") as f:
                f.write(os.environ.get("PYTEST_XDIST_WORKER", "none"))

        @pytest.mark.parametrize("i", range(8))
        @pytest.mark.xdist_group("one")
        def test_in_group_one(i):
            _note(f"one-{{i}}")

        @pytest.mark.parametrize("i", range(8))
        @pytest.mark.xdist_group("two")
        def test_in_group_two(i):
            _note(f"two-{{i}}")

        @pytest.mark.parametrize("i", range(8))
        def test_free(i):
            _note(f"free-{{i}}")
    '''))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "DURLOG"))}
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                          "--dist", "loadgroup", "-c", os.devnull, "--rootdir", str(tmp_path), str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    ran = {p.name: p.read_text() for p in out.iterdir()}
    assert len(ran) == 24
    for group in ("one", "two"):
        workers = {w for name, w in ran.items() if name.startswith(group + "-")}
        assert len(workers) == 1 and workers <= {"gw0", "gw1"}, (group, workers, json.dumps(ran))
