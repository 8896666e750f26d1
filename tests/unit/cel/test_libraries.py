"""Conformance of the library functions: strings v2, lists, sets, regex, IP/CIDR/URL, format."""

from __future__ import annotations

import pytest

T = ("match", True)
F = ("match", False)


def _err(text: str | None = None) -> tuple[str, str | None]:
    return ("runtime", text)


CASES = [
    # core strings and conversions
    pytest.param('size("héllo") == 5', T, id="size-code-points"),
    pytest.param('"hello".size() == 5', T, id="size-member"),
    pytest.param("size([1, 2]) == 2 && size({1: 2}) == 1 && size(b'ab') == 2", T, id="size-kinds"),
    pytest.param(
        '"abc".contains("b") && "abc".startsWith("a") && "abc".endsWith("c")',
        T,
        id="string-predicates",
    ),
    pytest.param('"abc".matches("^a.c$")', T, id="matches"),
    pytest.param('matches("abc", "b")', T, id="matches-global-unanchored"),
    pytest.param('"abc".matches("(")', ("compile", None), id="matches-bad-regex-literal"),
    pytest.param('"abc".matches(dyn("("))', ("runtime", None), id="matches-bad-regex"),
    pytest.param(
        'int("42") == 42 && uint("42") == 42u && double("1.5") == 1.5', T, id="parse-numbers"
    ),
    pytest.param(
        'int("x") == 1',
        ("compile", "program instantiation failed: type conversion error from 'string' to 'int'"),
        id="int-literal-parse-error",
    ),
    pytest.param(
        'int(dyn("x")) == 1',
        _err('strconv.ParseInt: parsing "x": invalid syntax'),
        id="int-parse-error",
    ),
    pytest.param("int(1e19) == 1", _err("integer overflow"), id="int-from-double-range"),
    pytest.param("uint(-1) == 1u", _err("unsigned integer overflow"), id="uint-negative"),
    pytest.param(
        'string(1.5) == "1.5" && string(1e6) == "1e+06" && string(100.0) == "100"',
        T,
        id="double-to-string",
    ),
    pytest.param(
        'string(true) == "true" && string(b"ab") == "ab" && string(2u) == "2"', T, id="to-string"
    ),
    pytest.param('bool("true") && !bool("0")', T, id="string-to-bool"),
    pytest.param('bytes("a") == b"a"', T, id="string-to-bytes"),
    pytest.param("type(1) == int && type(1u) == uint && type('a') == string", T, id="type"),
    pytest.param(
        "type([]) == list && type({}) == map && type(null) == null_type", T, id="type-aggregates"
    ),
    pytest.param('"\\x41\\u00e9\\101" == "Aé" + "A"', T, id="escapes"),
    pytest.param('r"\\d" == "\\\\d"', T, id="raw-string"),
    pytest.param("'''a\nb''' == \"a\\nb\"", T, id="triple-quoted"),
    pytest.param('duration("1h30m") == duration("90m")', T, id="duration"),
    pytest.param(
        'timestamp("2024-01-01T00:00:00Z") + duration("24h") == timestamp("2024-01-02T00:00:00Z")',
        T,
        id="timestamp-arith",
    ),
    pytest.param(
        'duration("1x") == duration("1s")', ("compile", None), id="duration-literal-error"
    ),
    pytest.param(
        'duration(dyn("1x")) == duration("1s")',
        _err('time: invalid duration "1x"'),
        id="duration-error",
    ),
    pytest.param(
        'timestamp("2024-03-05T10:20:30.250Z").getFullYear() == 2024 && '
        'timestamp("2024-03-05T10:20:30.250Z").getMonth() == 2 && '
        'timestamp("2024-03-05T10:20:30.250Z").getDate() == 5 && '
        'timestamp("2024-03-05T10:20:30.250Z").getDayOfMonth() == 4 && '
        'timestamp("2024-03-05T10:20:30.250Z").getDayOfWeek() == 2 && '
        'timestamp("2024-03-05T10:20:30.250Z").getDayOfYear() == 64 && '
        'timestamp("2024-03-05T10:20:30.250Z").getMilliseconds() == 250',
        T,
        id="timestamp-getters",
    ),
    pytest.param(
        'timestamp("2024-03-05T23:30:00Z").getHours("+02:00") == 1 && '
        'timestamp("2024-03-05T23:30:00Z").getDate("Europe/Berlin") == 6',
        T,
        id="timestamp-getters-zone",
    ),
    pytest.param(
        'duration("90m").getHours() == 1 && duration("90m").getMinutes() == 90 && '
        'duration("-1.5s").getSeconds() == -1 && duration("1.5s").getMilliseconds() == 1500',
        T,
        id="duration-getters",
    ),
    # strings extension v2
    pytest.param('"héllo".charAt(1) == "é" && "abc".charAt(3) == ""', T, id="char-at"),
    pytest.param('"abc".charAt(4) == ""', _err("index out of range: 4"), id="char-at-range"),
    pytest.param('"hello".indexOf("l") == 2 && "hello".indexOf("l", 3) == 3', T, id="index-of"),
    pytest.param('"hello".indexOf("") == 0 && "hello".indexOf("z") == -1', T, id="index-of-edge"),
    pytest.param(
        '"hello".lastIndexOf("l") == 3 && "hello".lastIndexOf("l", 2) == 2', T, id="last-index-of"
    ),
    pytest.param('"hello".lastIndexOf("") == 5', T, id="last-index-of-empty"),
    pytest.param('"ÀbC".lowerAscii() == "Àbc" && "àbc".upperAscii() == "àBC"', T, id="ascii-case"),
    pytest.param(
        '"aaa".replace("a", "b") == "bbb" && "aaa".replace("a", "b", 2) == "bba"', T, id="replace"
    ),
    pytest.param(
        '"a,b,c".split(",") == ["a", "b", "c"] && "a,b,c".split(",", 2) == ["a", "b,c"]',
        T,
        id="split",
    ),
    pytest.param(
        '"abc".split("") == ["a", "b", "c"] && "a,b".split(",", 0) == []', T, id="split-edge"
    ),
    pytest.param(
        '"hello".substring(1) == "ello" && "hello".substring(1, 3) == "el"', T, id="substring"
    ),
    pytest.param(
        '"hello".substring(3, 1) == ""',
        _err("invalid substring range. start: 3, end: 1"),
        id="substring-range",
    ),
    pytest.param('" \\t x \\n".trim() == "x"', T, id="trim"),
    pytest.param('["a", "b"].join() == "ab" && ["a", "b"].join("-") == "a-b"', T, id="join"),
    pytest.param('strings.quote("a\\"b") == "\\"a\\\\\\"b\\""', T, id="quote"),
    pytest.param('"abc".reverse() == "cba"', ("compile", None), id="reverse-is-v3"),
    # format
    pytest.param(
        '"%s-%d-%.2f".format([dyn("x"), dyn(3), dyn(1.5)]) == "x-3-1.50"', T, id="format-basic"
    ),
    pytest.param('"%x|%X|%o|%b".format([255, 255, 8, 5]) == "ff|FF|10|101"', T, id="format-bases"),
    pytest.param('"%e".format([1234.5]) == "1.234500e+03"', T, id="format-scientific"),
    pytest.param('"%s".format([[1, 2]]) == "[1, 2]"', T, id="format-list"),
    pytest.param('"100%%".format([]) == "100%"', T, id="format-percent"),
    pytest.param('"%d".format(["x"]) == ""', ("compile", None), id="format-literal-type-error"),
    pytest.param('"%d".format([dyn("x")]) == ""', _err(None), id="format-type-error"),
    pytest.param('"%s %s".format(dyn(["x"])) == ""', _err(None), id="format-missing-arg"),
    # regex library
    pytest.param('"abc123".find("[0-9]+") == "123" && "abc".find("[0-9]") == ""', T, id="find"),
    pytest.param('"a1b2c3".findAll("[0-9]") == ["1", "2", "3"]', T, id="find-all"),
    pytest.param('"a1b2c3".findAll("[0-9]", 2) == ["1", "2"]', T, id="find-all-limit"),
    # Kubernetes lists library
    pytest.param("[1, 2, 3].isSorted() && ![2, 1].isSorted()", T, id="is-sorted"),
    pytest.param("[1, 2, 3].sum() == 6 && [1.5, 2.5].sum() == 4.0 && [].sum() == 0", T, id="sum"),
    pytest.param("[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3", T, id="min-max"),
    pytest.param("[].min() == 1", _err("min called on empty list"), id="min-empty"),
    pytest.param(
        "[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2", T, id="index-of-list"
    ),
    # ext.Lists v3
    pytest.param("[[1], [2, 3]].flatten() == [1, 2, 3]", T, id="flatten"),
    pytest.param("lists.range(3) == [0, 1, 2]", T, id="range"),
    pytest.param("[1, 2, 3, 4].slice(1, 3) == [2, 3]", T, id="slice"),
    pytest.param("[3, 1, 2].sort() == [1, 2, 3]", T, id="sort"),
    pytest.param("[1, 2, 1].distinct() == [1, 2]", T, id="distinct"),
    pytest.param("[1, 2].reverse() == [2, 1]", T, id="list-reverse"),
    pytest.param(
        "[1, 2].first().value() == 1 && [].last().hasValue() == false", T, id="first-last"
    ),
    # sets
    pytest.param(
        "sets.contains([1, 2, 3], [2, 3]) && !sets.contains([1], [2])", T, id="sets-contains"
    ),
    pytest.param("sets.equivalent([1, 2], [2, 1, 1])", T, id="sets-equivalent"),
    pytest.param(
        "sets.intersects([1, 2], [2, 5]) && !sets.intersects([1], [])", T, id="sets-intersects"
    ),
    # in, lists and maps
    pytest.param('"b" in ["a", "b"] && 2 in {1: "a", 2: "b"} && !(3 in [1, 2])', T, id="in"),
    pytest.param("[1, 2] + [3] == [1, 2, 3]", T, id="list-concat"),
    pytest.param('{"a": 1}["b"] == 1', _err("no such key: b"), id="map-missing-key"),
    pytest.param("[1, 2][5] == 1", _err("index out of bounds: 5"), id="list-out-of-range"),
    pytest.param("dyn({1: 'a'})[1u] == 'a' && dyn({1: 'a'})[1.0] == 'a'", T, id="numeric-map-keys"),
    pytest.param(
        "[[1, 2], [3]] == [[1, 2], [3]] && {'a': [1]} == {'a': [1]}", T, id="deep-equality"
    ),
    pytest.param(
        "{'a': 1, 'a': 2}.size() == 1",
        T,
        id="duplicate-map-key-last-wins",
    ),
    # IP, CIDR, URL
    pytest.param('ip("10.0.0.1").family() == 4 && ip("::1").family() == 6', T, id="ip-family"),
    pytest.param('isIP("1.2.3.4") && !isIP("1.2.3") && !isIP("01.2.3.4")', T, id="is-ip"),
    pytest.param(
        'ip.isCanonical("2001:db8::1") && !ip.isCanonical("2001:DB8::1")', T, id="ip-canonical"
    ),
    pytest.param(
        'ip("127.0.0.1").isLoopback() && ip("0.0.0.0").isUnspecified()', T, id="ip-predicates"
    ),
    pytest.param(
        'ip("169.254.1.1").isLinkLocalUnicast() && ip("224.0.0.1").isLinkLocalMulticast()',
        T,
        id="ip-link-local",
    ),
    pytest.param(
        'ip("10.0.0.1").isGlobalUnicast() && !ip("255.255.255.255").isGlobalUnicast()',
        T,
        id="ip-global-unicast-is-go-semantics",
    ),
    pytest.param('string(ip("::1")) == "::1"', T, id="ip-string"),
    pytest.param('ip("::ffff:1.2.3.4").family() == 6', _err(None), id="ip-v4-mapped"),
    pytest.param(
        'cidr("10.0.0.0/8").containsIP("10.1.2.3") && '
        '!cidr("10.0.0.0/8").containsIP(ip("11.0.0.1"))',
        T,
        id="cidr-contains-ip",
    ),
    pytest.param(
        'cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16") && '
        '!cidr("10.1.0.0/16").containsCIDR(cidr("10.0.0.0/8"))',
        T,
        id="cidr-contains-cidr",
    ),
    pytest.param(
        'cidr("1.2.3.4/24").masked() == cidr("1.2.3.0/24") && '
        'cidr("1.2.3.4/24").prefixLength() == 24',
        T,
        id="cidr-masked",
    ),
    pytest.param(
        'cidr("1.2.3.4/24").ip() == ip("1.2.3.4") && isCIDR("::/0") && !isCIDR("1.2.3.4")',
        T,
        id="cidr-ip",
    ),
    pytest.param(
        'url("https://user@example.com:8080/a%20b?x=1&x=2").getHostname() == "example.com"',
        T,
        id="url-hostname",
    ),
    pytest.param(
        'url("https://example.com:8080/p").getPort() == "8080" && '
        'url("https://example.com/p").getScheme() == "https"',
        T,
        id="url-port-scheme",
    ),
    pytest.param('url("https://[::1]:80/").getHostname() == "::1"', T, id="url-ipv6"),
    pytest.param('url("https://e.com/?x=1&x=2").getQuery()["x"] == ["1", "2"]', T, id="url-query"),
    pytest.param('isURL("/absolute/path") && !isURL("relative")', T, id="is-url"),
]


@pytest.mark.parametrize(("expression", "expected"), CASES)
def test_library_conformance(outcome, expression: str, expected: tuple[str, object]) -> None:
    actual = outcome(expression)
    assert actual[0] == expected[0], actual
    if expected[1] is not None:
        assert actual[1] == expected[1]
