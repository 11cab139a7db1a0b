"""flink-conf reads YAML as YAML and spark-conf reads properties as java.util.Properties does.

The user's text is always kept byte for byte; only entries for keys the user did not set are
appended, in the text's own syntax and line ends, and read back to exactly the values meant.
"""

from __future__ import annotations

import pytest
import yaml
from lifecycle_helpers import lineage_settings

from planlineage import listener_conf
from planlineage.listener_conf import syntax as conf_syntax

TOKEN = "tok-FAKE-1234567890"


def values(**settings):
    return lineage_settings(TOKEN, **settings)


def flink_conf(text: str, **settings) -> tuple[str, list[str]]:
    warnings: list[str] = []
    out = listener_conf.merge_bytes(
        text.encode(),
        lambda v, existing, w: listener_conf.flink_entries(v, "2.1", existing, w),
        values(**settings),
        warn=warnings.append,
        default_style=":",
    )
    return out.decode(), warnings


def spark_conf(text: str, **settings) -> tuple[str, list[str]]:
    warnings: list[str] = []
    out = listener_conf.merge_bytes(
        text.encode(), listener_conf.spark_entries, values(**settings), warn=warnings.append, default_style="="
    )
    return out.decode(), warnings


def flink_options(text: str) -> dict[str, str]:
    """What Flink reads: the YAML document, nested mappings flattened to dotted keys."""
    return conf_syntax.yaml_keys(text)


# -- YAML ----------------------------------------------------------------------------------------


def test_a_flow_style_listener_is_the_users_and_is_not_added_again():
    text = "execution: {job-status-changed-listeners: com.acme.F}\n"
    out, warnings = flink_conf(text)
    assert out.startswith(text)
    assert out.count("job-status-changed-listeners") == 1
    assert flink_options(out)["execution.job-status-changed-listeners"] == "com.acme.F"
    assert len(warnings) == 1 and "com.acme" not in warnings[0] and listener_conf.FLINK_LISTENER_FACTORY in warnings[0]


def test_a_flow_style_transport_is_not_overridden():
    text = "openlineage: {transport: {type: console}}\n"
    out, warnings = flink_conf(text)
    options = flink_options(out)
    assert options["openlineage.transport.type"] == "console"
    assert not any(k.startswith("openlineage.transport.") and k != "openlineage.transport.type" for k in options)
    assert TOKEN not in out  # no second transport, so no credentials either
    assert options["execution.job-status-changed-listeners"] == listener_conf.FLINK_LISTENER_FACTORY
    assert warnings == ["the application sets openlineage.transport.* itself; its transport is left as is"]


def test_a_listener_list_that_already_has_ours_gives_no_warning():
    text = f"execution:\n  job-status-changed-listeners: [com.acme.F, {listener_conf.FLINK_LISTENER_FACTORY}]\n"
    out, warnings = flink_conf(text)
    assert out.count("job-status-changed-listeners") == 1 and warnings == []


def test_a_block_scalar_is_a_value_not_its_indicator():
    text = (
        "openlineage:\n"
        "  job:\n"
        "    namespace: >\n"
        "      folded\n"
        "      namespace\n"
        "env.java.opts.all: |\n"
        "  -Dkey: value\n"
        "  openlineage.transport.type: kafka\n"
    )
    out, warnings = flink_conf(text)
    options = flink_options(out)
    assert options["openlineage.job.namespace"] == "folded namespace\n"
    assert options["env.java.opts.all"] == "-Dkey: value\nopenlineage.transport.type: kafka\n"
    assert options["openlineage.transport.type"] == "http"  # the block scalar's text is not a key
    assert out[len(text) :].count("openlineage.job.namespace") == 0 and warnings == []


def test_anchors_aliases_and_merge_keys_count_as_set():
    text = (
        "defaults: &ol\n"
        "  transport: {type: kafka, topicName: lineage}\n"
        "openlineage:\n"
        "  <<: *ol\n"
        "  job: {namespace: *ol}\n"
    )
    out, warnings = flink_conf(text)
    options = flink_options(out)
    assert options["openlineage.transport.type"] == "kafka"
    assert "openlineage.transport.url" not in options and len(warnings) == 1


def test_comments_are_not_keys():
    text = "# openlineage.transport.type: kafka\nparallelism.default: 4  # execution.job-status-changed-listeners: x\n"
    out, warnings = flink_conf(text)
    options = flink_options(out)
    assert options["openlineage.transport.type"] == "http"
    assert options["execution.job-status-changed-listeners"] == listener_conf.FLINK_LISTENER_FACTORY
    assert options["parallelism.default"] == "4" and warnings == []


def test_crlf_text_is_kept_and_continued_with_crlf():
    text = "parallelism.default: 4\r\nopenlineage:\r\n  job:\r\n    namespace: mine\r\n"
    out, _ = flink_conf(text)
    assert out.startswith(text)
    added = out[len(text) :]
    assert added.endswith("\r\n") and "\n" not in added.replace("\r\n", "")
    options = flink_options(out)
    assert (
        options["openlineage.job.namespace"] == "mine"
        and options["openlineage.transport.url"] == "http://127.0.0.1:8090"
    )


def test_a_text_without_a_final_line_end_is_continued_on_a_new_line():
    out, _ = flink_conf("parallelism.default: 4")
    assert out.startswith("parallelism.default: 4\n# OpenLineage listener")
    assert flink_options(out)["parallelism.default"] == "4"


@pytest.mark.parametrize("value", ["true", "123", "null", "a: b", "x #y", "#lead", "~", "", "[x]", "{x}", "é", "a\nb"])
def test_appended_yaml_values_read_back_as_the_same_string(value):
    line = conf_syntax.format_yaml("openlineage.job.namespace", value)
    assert yaml.safe_load(line) == {"openlineage.job.namespace": value}


def test_invalid_yaml_or_not_a_mapping_is_echoed_with_one_line_that_quotes_nothing():
    for text in ("a: [1,\nsecret: hunter2-FAKE: x\n", "- a\n- b\n", "just a sentence\n"):
        out, warnings = flink_conf(text)
        assert out == text and len(warnings) == 1 and "hunter2" not in warnings[0] and "left unchanged" in warnings[0]


def test_an_empty_or_comment_only_yaml_gets_the_listener():
    for text in ("", "# nothing yet\n"):
        out, _ = flink_conf(text)
        assert flink_options(out)["execution.job-status-changed-listeners"] == listener_conf.FLINK_LISTENER_FACTORY


# -- Java properties -----------------------------------------------------------------------------


def test_properties_escapes_follow_java_util_properties():
    text = (
        "! a comment\n"
        "  # another comment \\\n"
        "spark.app.name = caf\\u00e9\\tbar\n"
        "spark.unicode=\\ud83d\\ude00\n"
        "key\\ with\\:colon\\=eq : value\n"
        "spark.long = first, \\\n"
        "             second\n"
        "only.key\n"
        "spark.extraListeners   com.acme.L\n"
        "trailing=kept  \n"
        "esc=\\q\\\\\n"
    )
    found, style = conf_syntax.parse_properties(text)
    assert found == {
        "spark.app.name": "café\tbar",
        "spark.unicode": "\U0001f600",
        "key with:colon=eq": "value",
        "spark.long": "first, second",
        "only.key": "",
        "spark.extraListeners": "com.acme.L",
        "trailing": "kept  ",
        "esc": "q\\",
    }
    assert style == "="


def test_a_comment_line_ending_in_a_backslash_does_not_swallow_the_next_line():
    found, _ = conf_syntax.parse_properties("# comment \\\nspark.extraListeners=x\n")
    assert found == {"spark.extraListeners": "x"}


def test_properties_line_ends_cr_lf_and_crlf():
    found, _ = conf_syntax.parse_properties("a=1\rb=2\r\nc=3\n")
    assert found == {"a": "1", "b": "2", "c": "3"}


def test_a_malformed_unicode_escape_leaves_the_text_unchanged_with_one_line():
    text = "spark.app.name=\\u12G4\n"
    out, warnings = spark_conf(text)
    assert out == text and len(warnings) == 1 and "\\u" in warnings[0] and "left unchanged" in warnings[0]


def test_spark_listener_in_an_escaped_or_continued_key_is_the_users():
    text = "spark.extra\\\n    Listeners=com.acme.L\n"
    out, warnings = spark_conf(text)
    assert out.startswith(text) and "spark.extraListeners" not in out[len(text) :]
    assert len(warnings) == 1


@pytest.mark.parametrize("style", ["=", ":", " "])
@pytest.mark.parametrize(
    ("key", "value"),
    [("spark.a", " leading space"), ("k ey:=#", "tab\tnl\ncr\rff\f"), ("#k", "back\\slash"), ("u", "é\U0001f600")],
)
def test_appended_properties_read_back_as_the_same_key_and_value(style, key, value):
    line = conf_syntax.format_property(key, value, style)
    assert line.isascii()
    assert conf_syntax.parse_properties(line + "\n") == ({key: value}, style)


def test_spark_crlf_properties_are_continued_with_crlf():
    text = "spark.app.name=x\r\n"
    out, _ = spark_conf(text)
    assert out.startswith(text) and out.endswith("\r\n") and "\n" not in out.replace("\r\n", "")
    found, _ = conf_syntax.parse_properties(out)
    assert found["spark.openlineage.transport.auth.apiKey"] == TOKEN


# -- one function for both engines ---------------------------------------------------------------


def test_spark_and_flink_entries_come_from_one_description_each():
    spark = listener_conf.spark_entries(values(), {}, [].append)
    flink = listener_conf.flink_entries(values(), "2.0", {}, [].append)
    assert [k.removeprefix("spark.") for k, _ in spark[1:]] == [k for k, _ in flink[1:-1]] + ["openlineage.namespace"]
    assert spark[0] == ("spark.extraListeners", listener_conf.SPARK_LISTENER)
    assert flink[0] == (listener_conf.FLINK_LISTENER_OPTION, listener_conf.FLINK_LISTENER_FACTORY)
    assert flink[-1] == ("openlineage.job.namespace", "planlineage")
