from dra_operator.cel import compile_selector, warm_up
from dra_operator.cel._parser import _parser


def test_warm_up_builds_the_parser_the_first_compile_then_reuses() -> None:
    _parser.cache_clear()
    warm_up()
    built = _parser.cache_info()
    compile_selector('device.driver == "gpu.example.com"')
    after = _parser.cache_info()
    assert (built.currsize, built.misses) == (1, 1)
    assert after.misses == built.misses
    assert after.hits > built.hits
