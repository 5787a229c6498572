"""Secret arguments inside a quoted list are each masked (a message quoting JSON holds them that way)."""

from __future__ import annotations

from reconciler.model.redact import redact_text


def test_every_secret_argument_of_a_quoted_list_is_masked() -> None:
    text = '["KAIScheduler","--client-secret Zq9000","--client-secret Zq9001"], --token=abc,def'
    masked = redact_text(text)
    assert "Zq9000" not in masked and "Zq9001" not in masked and "abc" not in masked and "def" not in masked
    assert masked.count("<redacted>") == 3 and masked.startswith('["KAIScheduler","--client-secret <redacted>"')


def test_an_unquoted_argument_is_still_masked_whole() -> None:
    assert redact_text("--password=p@ss:word/x y") == "--password=<redacted> y"
