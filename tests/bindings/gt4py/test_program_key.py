"""The translation key writes a typing alias of library types, and a library's class, once per
process and replays it after (program_key._FIXED): the replayed key is the key written afresh,
and an alias that names a user's class is walked every time, so that rebinding what the class
holds still changes the key."""

import typing

import pytest

gtx = pytest.importorskip("gt4py.next")

from kiln.gt4py import program_key  # noqa: E402

import programs as P  # noqa: E402


def written(value, names=frozenset()) -> list[str]:
    writer = program_key._Writer()
    writer.value(value, names)
    return writer.parts


def test_a_replayed_alias_writes_what_it_wrote_afresh():
    alias = gtx.Field[gtx.Dims[P.Cell, P.K], gtx.float64]
    program_key._FIXED.clear()
    fresh = written(alias)
    assert id(alias) in program_key._FIXED
    assert written(alias) == fresh
    assert written(P.pointwise.definition_stage) == written(P.pointwise.definition_stage)
    program_key._FIXED.clear()
    assert written(alias) == fresh


class Holder:
    value = 1


def test_an_alias_naming_a_users_class_is_walked_every_time():
    alias = tuple[Holder, gtx.float64]
    first = written(alias, frozenset({"value"}))
    assert id(alias) not in program_key._FIXED
    Holder.value = 2
    try:
        assert written(alias, frozenset({"value"})) != first
    finally:
        Holder.value = 1
    assert written(typing.Optional[int]) == written(typing.Optional[int])
