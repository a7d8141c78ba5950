"""kiln.Cache: cache administration from Python on entries a Runtime made.

Listing, records, figures, reading an entry whole, verify catching a corrupted
entry, gc to a size and to an age with exact counts, reindex after the index is
deleted, clear, a read-only Cache, misuse named.
"""

import datetime
import json
import os

import pytest

import kiln

SMOOTH = """#pragma kiln kernel smooth
#pragma kiln array double x[1]
#pragma kiln domain n
for (kiln::index_t i = 0; i < n; ++i) x(i) *= 0.5;
"""


@pytest.fixture
def made(tmp_path):
    """Three entries of `smooth` (n = 8, 16, 32), keys in the order made; the Runtime is gone after."""
    rt = kiln.Runtime(cache_dir=tmp_path, log_level="off")
    rt.register_kernel(SMOOTH, "smooth.kiln")
    keys = [rt.kernel("smooth", n=n).key for n in (8, 16, 32)]
    del rt
    return tmp_path, keys


def flip_first_byte(path):
    data = bytearray(path.read_bytes())
    data[0] ^= 1
    path.write_bytes(bytes(data))


def test_entries_records_and_stats(made):
    folder, keys = made
    cache = kiln.Cache(cache_dir=folder, log_level="off")
    assert cache.dir == folder and not cache.read_only
    assert cache.index_path == folder / "index.sqlite"
    files = cache.entries()
    assert [f.key for f in files] == sorted(keys)
    assert all(f.file_bytes == f.file.stat().st_size for f in files)
    assert all(isinstance(f.stored, datetime.datetime) for f in files)
    records = {r.key: r for r in cache.records()}
    assert sorted(records) == sorted(keys)
    assert {r.kernel for r in records.values()} == {"smooth"}
    assert json.loads(records[keys[1]].specialisation)["n"] == 16
    assert cache.index_problem == ""
    stats = cache.stats()
    assert (stats.entries, stats.indexed, stats.hits) == (3, 3, 0)
    assert stats.bytes == sum(f.file_bytes for f in files)


def test_read_gives_the_entry_whole(made):
    folder, keys = made
    cache = kiln.Cache(cache_dir=folder, read_only=True, log_level="off")
    entry = cache.read(keys[0].upper())
    assert entry.file.key == keys[0]
    assert entry.record.kernel == "smooth" and json.loads(entry.record.specialisation)["n"] == 8
    assert isinstance(entry.payload, bytes) and len(entry.payload) == entry.record.payload_bytes > 0
    assert entry.recipe.opt_level == "O3" and entry.recipe.compiler
    assert cache.read("0" * 32) is None
    with pytest.raises(kiln.ArgumentError, match="'12ab' is not a cache key"):
        cache.read("12ab")


def test_verify_finds_a_corrupted_entry(made):
    folder, keys = made
    cache = kiln.Cache(cache_dir=folder, log_level="off")
    bad = cache.entry_file(keys[2])
    flip_first_byte(bad)
    # Read-only first: reported, kept.
    report = kiln.Cache(cache_dir=folder, read_only=True, log_level="off").verify()
    assert (report.bad, report.removed, report.damage_left) == (1, 0, True)
    assert bad.exists()
    report = cache.verify()
    assert (report.checked, report.bad, report.removed, report.damage_left) == (3, 1, 1, False)
    assert report.removed_keys == [keys[2]]
    assert report.problems == [f"{bad}: payload checksum mismatch"]
    assert not bad.exists()
    assert len(cache.records()) == 2


def test_gc_evicts_least_recently_used_to_the_bound(made):
    folder, keys = made
    cache = kiln.Cache(cache_dir=folder, log_level="off")
    size = {f.key: f.file_bytes for f in cache.entries()}
    total = sum(size.values())
    report = cache.gc(total - 1)
    assert (report.limit, report.removed, report.removed_keys) == (total - 1, 1, [keys[0]])
    assert report.bytes_freed == size[keys[0]] and report.bytes_left == total - size[keys[0]]
    assert report.fits and report.failures == []
    assert cache.gc(size[keys[2]]).removed_keys == [keys[1]]
    assert [f.key for f in cache.entries()] == [keys[2]]
    assert [r.key for r in cache.records()] == [keys[2]]
    with pytest.raises(TypeError):
        cache.gc(-1)


def test_gc_with_an_age(made):
    folder, keys = made
    cache = kiln.Cache(cache_dir=folder, index_path="off", log_level="off")  # recency from the files' times
    old = cache.entry_file(keys[0])
    week_ago = old.stat().st_mtime - 7 * 86400
    os.utime(old, (week_ago, week_ago))
    report = cache.gc(1 << 40, max_age=datetime.timedelta(days=3))
    assert report.removed_keys == [keys[0]] and report.max_age == datetime.timedelta(days=3)
    assert cache.gc(1 << 40, max_age=datetime.timedelta(hours=1)).removed == 0


def test_reindex_after_the_index_is_deleted_then_clear(made):
    folder, keys = made
    # A Runtime notes its entries in the index's journal; the index is made where first opened.
    assert len(kiln.Cache(cache_dir=folder, log_level="off").records()) == 3
    (folder / "index.sqlite").unlink()
    cache = kiln.Cache(cache_dir=folder, log_level="off")
    report = cache.reindex()
    assert (report.records, report.without_metadata, report.skipped) == (3, 0, 0)
    assert sorted(r.key for r in cache.records()) == sorted(keys)
    cleared = cache.clear()
    assert (cleared.removed, cleared.failures) == (3, [])
    assert cache.entries() == [] and cache.records() == []


def test_a_read_only_cache_refuses_to_write(made):
    folder, _ = made
    cache = kiln.Cache(cache_dir=folder, read_only=True, log_level="off")
    assert cache.read_only and cache.records() == []
    with pytest.raises(kiln.Error, match="read-only"):
        cache.clear()
    with pytest.raises(kiln.Error, match="read-only"):
        cache.reindex()
    assert len(cache.entries()) == 3


def test_a_foreign_file_at_the_index_path_is_refused(made):
    folder, _ = made
    foreign = folder / "notes.txt"
    foreign.write_text("not an index\n")
    cache = kiln.Cache(cache_dir=folder, index_path=foreign, log_level="off")
    with pytest.raises(kiln.Error, match="not a SQLite database"):
        cache.clear()
    assert len(cache.entries()) == 3
    assert foreign.read_text() == "not an index\n"


def test_with_the_index_off_there_is_no_index_path(made):
    folder, _ = made
    cache = kiln.Cache(cache_dir=folder, index_path="off", log_level="off")
    assert cache.index_path is None and cache.stats().index is None
    assert cache.records() == []
    with pytest.raises(kiln.Error, match="the index is off"):
        cache.reindex()


def test_settings_and_sizes():
    with pytest.raises(kiln.Error, match="unknown setting 'cache_folder'"):
        kiln.Cache(cache_folder="/tmp")
    assert kiln.parse_byte_size("500M") == 500 << 20
    assert kiln.parse_byte_size("1e3") is None
