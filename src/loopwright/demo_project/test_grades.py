"""Tests for grades.py (plain asserts: they run under run_tests.py or pytest)."""

from grades import letter_grade


def expect(score: int, grade: str) -> None:
    got = letter_grade(score)
    assert got == grade, f"letter_grade({score}) returned {got!r}, expected {grade!r}"


def test_a_from_90() -> None:
    expect(90, "A")
    expect(100, "A")


def test_b_from_80() -> None:
    expect(80, "B")
    expect(89, "B")


def test_c_from_70() -> None:
    expect(70, "C")
    expect(79, "C")


def test_f_below_70() -> None:
    expect(0, "F")
    expect(69, "F")


def test_out_of_range() -> None:
    for bad in (-1, 101):
        try:
            letter_grade(bad)
        except ValueError:
            continue
        raise AssertionError(f"letter_grade({bad}) should raise ValueError")
