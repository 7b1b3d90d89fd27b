from loopfuse import Guard


def test_seventh_identical_call_is_denied_by_default() -> None:
    guard = Guard()
    results = [guard.check("bash", {"command": "ls"}, "a").allowed for _ in range(8)]
    assert results == [True] * 6 + [False, False]
