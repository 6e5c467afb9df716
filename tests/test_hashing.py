from judge.hashing import canonical_json, tagged_hash, text_sha256


def test_key_order_does_not_change_the_hash() -> None:
    assert tagged_hash({"a": 1, "b": [1, 2]}) == tagged_hash({"b": [1, 2], "a": 1})


def test_canonical_json_keeps_japanese_readable() -> None:
    assert canonical_json({"質問": "年額"}) == '{"質問":"年額"}'


def test_pinned_hash() -> None:
    # sha256 of '{"a":1}' is 015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862.
    # If this fails, the hashing recipe changed: bump HASH_SCHEME instead of editing this value.
    assert tagged_hash({"a": 1}) == (
        "h1:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
    )
    assert tagged_hash({"a": 1}, 16) == "h1:015abd7f5cc57a2d"


def test_text_sha256_is_exact_bytes() -> None:
    assert text_sha256("はい") != text_sha256("はい ")
