"""Letter grades for exam scores."""


def letter_grade(score: int) -> str:
    """The letter grade for a score from 0 to 100: A from 90, B from 80, C from 70, else F."""
    if not 0 <= score <= 100:
        raise ValueError(f"score out of range: {score}")
    if score > 90:
        return "A"
    if score >= 80:
        return "B"
    if score >= 70:
        return "C"
    return "F"
