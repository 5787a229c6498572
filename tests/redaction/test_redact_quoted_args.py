"""Secret arguments inside a quoted list are each masked (a message quoting JSON holds them that way)."""

from __future__ import annotations

from reconciler.core.redact import redact_text


def test_every_secret_argument_of_a_quoted_list_is_masked() -> None:
    text = '["KAIScheduler","--client-secret Zq9000","--client-secret Zq9001"], --token=abc,def'
    masked = redact_text(text)
    assert "Zq9000" not in masked and "Zq9001" not in masked and "abc" not in masked and "def" not in masked
    assert masked.count("<redacted>") == 3 and masked.startswith('["KAIScheduler","--client-secret <redacted>"')


def test_an_unquoted_argument_is_still_masked_whole() -> None:
    assert redact_text("--password=p@ss:word/x y") == "--password=<redacted> y"


def test_a_secret_flag_without_a_value_does_not_take_the_next_flag_as_its_value() -> None:
    """`-TOKEN --db-password pw`: the next flag is not -TOKEN's value, so pw is still masked (hypothesis
    found it in tests/report/test_telemetry.py)."""
    assert redact_text("-TOKEN --db-password 22222222") == "-TOKEN --db-password <redacted>"
    assert redact_text("--token -abc") == "--token <redacted>"  # a value may still start with a dash
