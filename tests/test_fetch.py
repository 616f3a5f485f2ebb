"""``fetch_table`` against a local fake of the Hub: never over the network."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from bolt_pco64.cli import main
from bolt_pco64.instances import PCO64_INSTANCE
from bolt_pco64.tables.fetch import FetchError, fetch_table
from bolt_pco64.tables.table import TableError, load_table
from tests._tables import small_frame

HF_REPO_ID = PCO64_INSTANCE.dataset_id
HF_REVISION = PCO64_INSTANCE.dataset_revision


def _fake_hub(files: dict[str, pd.DataFrame | bytes]):
    """A downloader that 'downloads' the given files into the local folder."""
    calls: list[Path] = []

    def download(local_dir: Path) -> None:
        calls.append(local_dir)
        for name, content in files.items():
            path = local_dir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            elif name.endswith(".csv"):
                content.to_csv(path, index=False)
            else:
                content.to_parquet(path, index=False)

    download.calls = calls  # type: ignore[attr-defined]
    return download


def test_valid_download_is_installed_and_found_by_the_loader(tmp_path: Path) -> None:
    home = tmp_path / "home"
    measured = small_frame(seed=4)
    hub = _fake_hub({"data/train-00000.parquet": measured, "README.md": b"card"})
    path = fetch_table(home, download=hub)
    assert path == home / "pco64.parquet"
    pd.testing.assert_frame_equal(load_table(path).frame, load_table(measured).frame)
    record = json.loads((home / "pco64.json").read_text())
    assert (record["repo_id"], record["revision"]) == (HF_REPO_ID, HF_REVISION)
    assert record["file"] == "data/train-00000.parquet"
    assert len(record["sha256"]) == 64
    assert sorted(os.listdir(home)) == ["pco64.json", "pco64.parquet"]


def test_csv_download_is_converted_to_parquet(tmp_path: Path) -> None:
    measured = small_frame(seed=6)
    path = fetch_table(
        tmp_path, download=_fake_hub({"data_64depth-64gpus.csv": measured})
    )
    assert path.read_bytes()[:4] == b"PAR1"
    pd.testing.assert_frame_equal(load_table(path).frame, load_table(measured).frame)


def test_existing_install_is_kept_unless_forced(tmp_path: Path) -> None:
    first = fetch_table(
        tmp_path, download=_fake_hub({"a.parquet": small_frame(seed=1)})
    )
    before = first.read_bytes()
    hub = _fake_hub({"a.parquet": small_frame(seed=2)})
    assert fetch_table(tmp_path, download=hub) == first
    assert hub.calls == []  # type: ignore[attr-defined]
    fetch_table(tmp_path, download=hub, force=True)
    assert first.read_bytes() != before


def test_invalid_download_changes_nothing(tmp_path: Path) -> None:
    good = fetch_table(tmp_path, download=_fake_hub({"a.parquet": small_frame(seed=1)}))
    before = sorted((p.name, p.read_bytes()) for p in tmp_path.iterdir())
    broken = small_frame(seed=2).drop(columns=["peak_mem"])
    with pytest.raises(TableError, match="peak_mem"):
        fetch_table(tmp_path, download=_fake_hub({"a.parquet": broken}), force=True)
    with pytest.raises(TableError, match=r"unreadable|empty"):
        fetch_table(
            tmp_path, download=_fake_hub({"a.parquet": b"PAR1junk"}), force=True
        )
    assert sorted((p.name, p.read_bytes()) for p in tmp_path.iterdir()) == before
    assert good.is_file()


def test_failed_download_changes_nothing_and_says_network(tmp_path: Path) -> None:
    def offline(local_dir: Path) -> None:
        (local_dir / "partial.parquet").write_bytes(b"PAR1")
        raise ConnectionError("no route to host")

    with pytest.raises(FetchError, match="network access"):
        fetch_table(tmp_path / "home", download=offline)
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize(
    ("files", "pattern"),
    [
        ({"README.md": b"no table"}, "Expected a parquet or CSV table"),
        ({"a.parquet": b"x", "b.parquet": b"y"}, r"Expected one \*\.parquet file"),
    ],
)
def test_snapshot_without_one_table_is_a_fetch_error(
    tmp_path: Path, files: dict[str, bytes], pattern: str
) -> None:
    with pytest.raises(FetchError, match=pattern):
        fetch_table(tmp_path, download=_fake_hub(files))  # type: ignore[arg-type]


def test_cli_fetch_uses_the_hub_client_and_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, object] = {}

    def fake_snapshot_download(repo_id: str, **kwargs: object) -> str:
        seen.update(kwargs, repo_id=repo_id)
        small_frame(seed=3).to_parquet(Path(str(kwargs["local_dir"])) / "t.parquet")
        return str(kwargs["local_dir"])

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    result = CliRunner().invoke(main, ["fetch", "--data-home", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "pco64.parquet" in result.output
    assert seen["repo_id"] == HF_REPO_ID
    assert seen["revision"] == HF_REVISION
    assert seen["repo_type"] == "dataset"


def test_cli_fetch_failure_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(repo_id: str, **kwargs: object) -> str:
        raise OSError("hub unreachable")

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", broken)
    result = CliRunner().invoke(main, ["fetch", "--data-home", str(tmp_path)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert "hub unreachable" in lines[0]


@pytest.mark.parametrize("name", ["pco16", "pco32"])
def test_each_instance_fetches_its_own_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    seen: dict[str, object] = {}

    def fake_snapshot_download(repo_id: str, **kwargs: object) -> str:
        seen.update(kwargs, repo_id=repo_id)
        small_frame(seed=3, instance=name).to_parquet(
            Path(str(kwargs["local_dir"])) / "t.parquet"
        )
        return str(kwargs["local_dir"])

    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    path = fetch_table(tmp_path, instance=name)
    assert path == tmp_path / f"{name}.parquet"
    assert seen["repo_id"] == f"Glow-AI/{name}_tabular_data"
    assert seen["revision"] == "v0.1.0"
    record = json.loads((tmp_path / f"{name}.json").read_text())
    assert (record["instance"], record["repo_id"]) == (name, seen["repo_id"])
    # installed where that instance's loader looks, and only there
    monkeypatch.setenv("BOLT_PCO64_HOME", str(tmp_path))
    assert load_table(instance=name).source.path == path
    assert sorted(os.listdir(tmp_path)) == [f"{name}.json", f"{name}.parquet"]


def test_another_instances_table_is_not_installed(tmp_path: Path) -> None:
    pco64_table = small_frame(seed=1)
    with pytest.raises(TableError, match=r"pco16 table .*log2_cp_size"):
        fetch_table(
            tmp_path, instance="pco16", download=_fake_hub({"a.parquet": pco64_table})
        )
    assert list(tmp_path.iterdir()) == []
