"""elfweb.messages: each type's schema accepts its messages and refuses everything else with BadMessage."""

import json
import random

import pytest

from elfweb.messages import MAX_MESSAGE_BYTES, SCHEMAS, BadMessage, parse

VALID = [
    {"type": "open", "entry": "minirts-ai"},
    {"type": "control", "action": "step"},
    {"type": "speed", "fps": 60},
    {"type": "command", "action": 5},
    {"type": "go_move", "row": 0, "col": 18},
    {"type": "go_pass"},
    {"type": "unit_command", "units": [3, 4], "kind": "move", "target": 0, "x": 10, "y": 63, "build": "none"},
    {"type": "unit_command", "units": [2], "kind": "build", "target": 0, "x": 6, "y": 6, "build": "barracks"},
]


@pytest.mark.parametrize("message", VALID)
def test_a_valid_message_comes_back_as_sent(message):
    assert parse(json.dumps(message)) == message


def unit_command(**fields) -> str:
    return json.dumps({"type": "unit_command", "units": [1], "kind": "move", "target": 0, "x": 0, "y": 0,
                       "build": "none", **fields})


@pytest.mark.parametrize("text, why", [
    ("not json", "not JSON"),
    ("[1, 2]", "JSON object"),
    ('{"type": "shell", "cmd": "rm"}', "unknown message type"),
    ('{"entry": "x"}', "unknown message type"),
    ('{"type": "open"}', "takes the fields"),
    ('{"type": "open", "entry": "x", "path": "/etc/passwd"}', "takes the fields"),
    ('{"type": "open", "entry": ""}', "field 'entry'"),
    ('{"type": "open", "entry": "' + "x" * 65 + '"}', "field 'entry'"),
    ('{"type": "open", "entry": "a\\nb"}', "field 'entry'"),
    ('{"type": "speed", "fps": 0}', "field 'fps'"),
    ('{"type": "speed", "fps": 30.0}', "field 'fps'"),
    ('{"type": "speed", "fps": true}', "field 'fps'"),
    ('{"type": "go_move", "row": 19, "col": 0}', "field 'row'"),
    ('{"type": "control", "action": "explode"}', "field 'action'"),
    ("[" * 100_000, "bytes"),
    ('{"type": "go_pass", "pad": "' + "x" * MAX_MESSAGE_BYTES + '"}', "bytes"),
    (b"\xff\xfe", "not JSON"),
    (unit_command(units=[]), "field 'units'"),
    (unit_command(units=[0]), "field 'units'"),  # uids start at 1
    (unit_command(units=list(range(1, 82))), "field 'units'"),  # more than a player has
    (unit_command(units=[1, True]), "field 'units'"),
    (unit_command(units=[1.0]), "field 'units'"),
    (unit_command(units={"1": 1}), "field 'units'"),
    (unit_command(units=[2**31]), "field 'units'"),  # past the game's uid range
    (unit_command(x=64), "field 'x'"),  # past the largest map
    (unit_command(y=-1), "field 'y'"),
    (unit_command(kind="teleport"), "field 'kind'"),
    (unit_command(build="base"), "field 'build'"),  # no one builds a base
    ('{"type": "unit_command", "units": [1], "kind": "move"}', "takes the fields"),
])
def test_a_bad_message_is_refused_saying_why(text, why):
    with pytest.raises(BadMessage, match=why):
        parse(text)


def random_value(rng: random.Random, depth: int = 0):
    kinds = ["int", "float", "str", "bool", "none"] + (["list", "dict"] if depth < 3 else [])
    kind = rng.choice(kinds)
    if kind == "int":
        return rng.choice([0, 1, -1, 18, 19, 60, 61, 2**70, rng.randint(-1000, 1000)])
    if kind == "float":
        return rng.choice([0.5, float("nan"), 1e308, -0.0])
    if kind == "str":
        return rng.choice(["", "open", "minirts-ai", "../../etc/passwd", "\u0000", "é" * 70, "step", "move",
                           "none", "barracks"])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "none":
        return None
    if kind == "list":
        if rng.random() < 0.5:  # a list of uids, as a unit command's
            return [rng.choice([1, 7, 2**31 - 2, 0, -1, 2**31]) for _ in range(rng.choice([0, 1, 2, 80, 81]))]
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    fields = ["type", "entry", "fps", "row", "col", "action", "x", "y", "units", "kind", "target", "build"]
    return {rng.choice(fields): random_value(rng, depth + 1) for _ in range(rng.randint(0, 7))}


def test_fuzzed_messages_either_pass_their_schema_or_raise_bad_message():
    rng = random.Random(62)
    accepted, kinds = 0, set()
    for _ in range(5000):
        if rng.random() < 0.3:  # a valid message with one field changed, dropped or added
            value = dict(rng.choice(VALID))
            field = rng.choice(sorted(value) + ["extra"])
            if rng.random() < 0.2:
                value.pop(field, None)
            else:
                value[field] = random_value(rng)
        else:
            value = random_value(rng)
        if isinstance(value, dict) and rng.random() < 0.5:
            value["type"] = rng.choice(sorted(SCHEMAS))
        try:
            text = json.dumps(value)
        except ValueError:
            continue
        try:
            message = parse(text)
        except BadMessage:
            continue
        accepted += 1
        kinds.add(message["type"])
        schema = SCHEMAS[message["type"]]
        assert set(message) == {"type", *schema}
        assert all(rule.check(message[name]) for name, rule in schema.items())
    assert accepted > 0  # the fuzzer reaches valid messages too, so the check above ran
    assert "unit_command" in kinds  # the richest schema among them
