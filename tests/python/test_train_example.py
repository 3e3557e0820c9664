"""The main job, python -m uma.examples.train: runs as a subprocess (as the README runs it),
checks the JSON summary, the accuracy goal on the real digits data, and that bad data ends with
a one-line error and exit code 2."""
import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import uma
from uma.examples import train

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*args, cwd=None):
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(uma.__file__)))
    env["PYTHONPATH"] = pkg_parent + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    return subprocess.run([sys.executable, "-m", "uma.examples.train", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=300)


def summary(proc):
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_default_run_reaches_95_percent_with_both_backends_agreeing(tmp_path):
    png = tmp_path / "loss.png"
    proc = run("--json", "--plot", str(png), cwd=tmp_path)
    s = summary(proc)
    assert s["test_accuracy"] >= 0.95
    assert s["reference_test_accuracy"] == s["test_accuracy"]
    assert s["predictions_identical"] is True
    assert s["backend"] == "cpu" and s["epochs"] >= 1
    assert s["n_train"] + s["n_test"] == 1797 and s["n_test"] == 359
    assert s["data"].endswith(os.path.join("sklearn", "datasets", "data", "digits.csv.gz"))
    # the dataset was imported without a copy: train + test features (float64) and labels
    assert s["adopted_bytes"] == 1797 * 64 * 8 + 1797 * 8
    assert s["copied_bytes"] == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert s["plot"] == str(png)
    out = proc.stdout
    epoch_lines = [ln for ln in out.splitlines() if ln.startswith("epoch")]
    assert len(epoch_lines) == s["epochs"]
    assert all("loss" in ln and "train_acc" in ln and ln.rstrip().endswith("s") for ln in epoch_lines)
    assert f"loss curve: {png}" in out
    assert "adopted" in out and "copied" in out
    assert s["seconds"] < 60


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_options_and_json(tmp_path, backend):
    s = summary(run("--epochs", "2", "--hidden", "16", "--lr", "0.2", "--batch-size", "64",
                    "--seed", "3", "--backend", backend, "--dtype", "float32",
                    "--plot", str(tmp_path / "p.png"), "--json"))
    assert (s["epochs"], s["hidden"], s["lr"], s["batch_size"], s["seed"]) == (2, 16, 0.2, 64, 3)
    assert s["backend"] == backend and s["dtype"] == "float32"
    assert len(s["train_loss"]) == 2
    for key in ("test_accuracy", "reference_test_accuracy"):
        assert 0.0 <= s[key] <= 1.0
    assert s["adopted_bytes"] == 1797 * 64 * 4 + 1797 * 8
    for key in ("adopted_bytes", "copied_bytes", "seconds"):
        assert key in s


@pytest.mark.parametrize("model,backend", [("mlp", "cpu"), ("logreg", "cpu"), ("logreg", "numpy")])
def test_compare_numpy_trains_the_same_model_by_hand(tmp_path, model, backend):
    proc = run("--model", model, "--backend", backend, "--compare", "numpy", "--epochs", "4",
               "--json", "--plot", str(tmp_path / "c.png"))
    s = summary(proc)
    assert s["model"] == model and s["backend"] == backend
    c = s["compare"]["numpy"]
    assert len(c["epoch_seconds"]) == len(s["epoch_seconds"]) == 4
    assert all(t > 0 for t in c["epoch_seconds"] + s["epoch_seconds"])
    # the same arithmetic from the same start on the same minibatches: rounding apart
    assert c["max_param_diff"] < 1e-10
    np.testing.assert_allclose(c["train_loss"], s["train_loss"], rtol=1e-10)
    assert abs(c["test_accuracy"] - s["test_accuracy"]) <= 1 / s["n_test"]
    assert f"epoch time: uma ({backend})" in proc.stdout and "numpy" in proc.stdout


def test_compare_backends_trains_the_same_model_on_each(tmp_path):
    # uma's numpy backend is "numpy-backend" in --compare; "numpy" is the hand-written loop
    others = ["numpy-backend" if b == "numpy" else b for b in uma.backends() if b not in ("cpu", "cuda")]
    assert "numpy-backend" in others
    proc = run("--compare", ",".join(others + ["numpy"]), "--epochs", "3", "--json",
               "--plot", str(tmp_path / "c.png"))
    s = summary(proc)
    assert sorted(s["compare"]) == sorted(set(others) | {"numpy"})
    for name in others:
        c = s["compare"][name]
        assert len(c["epoch_seconds"]) == 3 and all(t > 0 for t in c["epoch_seconds"])
        # the same model from the same start: float64 rounding apart on every backend
        assert c["max_param_diff"] < 1e-10, name
        np.testing.assert_allclose(c["train_loss"], s["train_loss"], rtol=1e-10, err_msg=name)
        assert abs(c["test_accuracy"] - s["test_accuracy"]) <= 1 / s["n_test"]
    table = proc.stdout[proc.stdout.index("the same model on each backend"):]
    for name in ["cpu"] + others:
        assert any(line.split()[:1] == [name] for line in table.splitlines()), name
    lines = [line for line in table.splitlines() if line.split()[:1] in (["backend"], *([n] for n in ["cpu"] + others))]
    assert len(lines) == len(others) + 2 and len({len(line) for line in lines}) == 1, lines  # aligned columns


def test_logreg_reaches_93_percent(tmp_path):
    s = summary(run("--model", "logreg", "--json", "--plot", str(tmp_path / "l.png")))
    assert s["test_accuracy"] >= 0.93 and s["predictions_identical"] is True
    assert s["compare"] is None and len(s["epoch_seconds"]) == s["epochs"]


def test_same_seed_same_result(tmp_path):
    a = summary(run("--epochs", "2", "--json", "--plot", str(tmp_path / "a.png")))
    b = summary(run("--epochs", "2", "--json", "--plot", str(tmp_path / "b.png")))
    assert a["train_loss"] == b["train_loss"] and a["test_accuracy"] == b["test_accuracy"]


def _write_csv(path, rows):
    path.write_text("\n".join(",".join(str(v) for v in r) for r in rows) + "\n")
    return str(path)


def test_custom_csv_and_npz(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    y = (X[:, 0] > 0).astype(int)
    csv = _write_csv(tmp_path / "d.csv", np.column_stack([X, y]))
    s = summary(run("--data", csv, "--epochs", "3", "--json", "--plot", str(tmp_path / "c.png")))
    assert s["n_train"] + s["n_test"] == 60
    npz = tmp_path / "d.npz"
    np.savez(npz, X=X, y=y)
    s = summary(run("--data", str(npz), "--epochs", "3", "--json", "--plot", str(tmp_path / "n.png")))
    assert s["n_train"] + s["n_test"] == 60


def _bad_cases(tmp_path):
    good = [[0.1, 0.2, 1]] * 20
    ragged = good[:5] + [[0.1, 1]] + good[:5]
    nan_labels = good[:10] + [[0.1, 0.2, "nan"]] + good[:10]
    cases = {
        "missing file": str(tmp_path / "nope.csv"),
        "ragged rows": _write_csv(tmp_path / "ragged.csv", ragged),
        "NaN labels": _write_csv(tmp_path / "nan.csv", nan_labels),
        "one column": _write_csv(tmp_path / "one.csv", [[1]] * 20),
        "not numbers": _write_csv(tmp_path / "words.csv", [["a", "b", "c"]] * 20),
        "empty": _write_csv(tmp_path / "empty.csv", []),
        "fractional labels": _write_csv(tmp_path / "frac.csv", [[0.1, 0.2, 0.5]] * 20),
        "huge labels": _write_csv(tmp_path / "huge.csv", [[0.1, 0.2, 0]] * 10 + [[0.1, 0.2, 10**9]] * 10),
        "negative labels": _write_csv(tmp_path / "neg.csv", [[0.1, 0.2, -1]] * 10 + [[0.1, 0.2, 1]] * 10),
        "one class": _write_csv(tmp_path / "oneclass.csv", [[0.1, 0.2, 3]] * 20),
        "too few rows": _write_csv(tmp_path / "few.csv", [[0.1, 0.2, 0], [0.3, 0.1, 1]]),
        "inf features": _write_csv(tmp_path / "inf.csv", [[0.1, "inf", 0]] * 10 + [[0.1, 0.2, 1]] * 10),
        "directory": str(tmp_path),
    }
    np.savez(tmp_path / "wrong_shape.npz", X=np.zeros((20, 2, 2)), y=np.zeros(20))
    cases["npz X 3-d"] = str(tmp_path / "wrong_shape.npz")
    np.savez(tmp_path / "mismatch.npz", X=np.zeros((20, 2)), y=np.zeros(19))
    cases["npz length mismatch"] = str(tmp_path / "mismatch.npz")
    np.savez(tmp_path / "nokey.npz", X=np.zeros((20, 2)))
    cases["npz without y"] = str(tmp_path / "nokey.npz")
    np.savez(tmp_path / "nan.npz", X=np.zeros((20, 2)), y=np.r_[np.zeros(19), np.nan])
    cases["npz NaN labels"] = str(tmp_path / "nan.npz")
    with gzip.open(tmp_path / "broken.csv.gz", "wb") as fh:
        fh.write(b"1,2,3\n4,5\n")
    cases["gz ragged"] = str(tmp_path / "broken.csv.gz")
    return cases


def test_bad_data_exits_2_with_a_one_line_error(tmp_path):
    proc = run("--data", str(tmp_path / "nope.csv"), "--epochs", "1")  # the real exit code
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.strip().startswith("error: ") and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr + proc.stdout


def test_every_kind_of_bad_data_returns_2_with_one_line(tmp_path, capsys):
    for what, path in _bad_cases(tmp_path).items():
        rc = train.main(["--data", path, "--epochs", "1", "--plot", str(tmp_path / "p.png")])
        out, err = capsys.readouterr()
        assert rc == 2, (what, out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (what, err)


def test_bad_data_messages_say_what_is_wrong(tmp_path):
    cases = _bad_cases(tmp_path)
    expected = {"missing file": "not found", "ragged rows": "ragged", "NaN labels": "NaN labels",
                "npz X 3-d": "wrong shape", "npz length mismatch": "wrong shape",
                "npz without y": "lacks", "npz NaN labels": "NaN labels", "gz ragged": "ragged"}
    for what, word in expected.items():
        with pytest.raises(train.DataError, match=word):
            train.load_data(cases[what])


def test_compare_all_names_every_backend_and_the_loop():
    a = train.parse_args(["--compare", "all"], ["cpu", "numpy", "reference"])
    assert a.compare == ["numpy-backend", "reference", "numpy"]  # not cpu: it is --backend
    a = train.parse_args(["--backend", "numpy", "--compare", "all"], ["cpu", "numpy", "reference"])
    assert a.compare == ["cpu", "reference", "numpy"]


def test_bad_options_exit_2():
    for args in (["--epochs", "0"], ["--lr", "-1"], ["--backend", "nope"], ["--batch-size", "x"],
                 ["--model", "cnn"], ["--compare", "tensorflow"], ["--compare", ""], ["--compare", "cpu,,numpy"],
                 ["--compare", "cpu"], ["--compare", "cpu,cpu"], ["--backend", "numpy", "--compare", "numpy-backend"]):
        proc = run(*args)
        assert proc.returncode == 2, args
        assert "Traceback" not in proc.stderr


def test_logreg_ignores_hidden(tmp_path, capsys):
    rc = train.main(["--model", "logreg", "--hidden", "0", "--epochs", "1", "--json", "--plot", str(tmp_path / "l.png")])
    assert rc == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["epochs"] == 1


def test_in_process_main(tmp_path, capsys):
    rc = train.main(["--epochs", "1", "--json", "--plot", str(tmp_path / "x.png")])
    assert rc == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(last)["epochs"] == 1


@pytest.mark.parametrize("args,word", [
    (["--seed", "-1"], "--seed"),
    (["--plot", "."], "--plot"),
    (["--plot", ""], "--plot"),
    (["--batch-size", "64", "--hidden", "0"], "--hidden"),
    # 10**13 * 64 float64 weights: 5 PB, beyond the 128 TiB user address space of x86-64, so
    # the allocation fails even where the kernel overcommits memory (vm.overcommit_memory=1).
    (["--hidden", "10000000000000"], "MemoryError"),
])
def test_bad_options_exit_2_with_one_line(tmp_path, capsys, args, word):
    with pytest.raises(SystemExit) if args[0] != "--hidden" else _nothing():
        rc = train.main(["--epochs", "1", *args])
        assert rc == 2
    err = capsys.readouterr().err.strip()
    assert word in err and "Traceback" not in err, err


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
