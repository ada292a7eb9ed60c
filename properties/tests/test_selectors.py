"""properties sits below issues, so its selectors name the open issue statuses
instead of importing them; they must stay the same."""

from issues.models import Issue
from properties.selectors import OPEN_ISSUE_STATUSES


def test_open_issue_statuses_are_the_issue_models():
    assert set(OPEN_ISSUE_STATUSES) == set(Issue.OPEN_STATUSES)
