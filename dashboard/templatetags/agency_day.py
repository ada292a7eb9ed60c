from django import template

from dashboard.selectors import agency_day
from properties.scoping import user_organization_ids

register = template.Library()


@register.simple_tag(takes_context=True)
def agency_day_sections(context):
    """The sections of the agency's day for the signed-in user."""
    user = context["request"].user
    return agency_day(organization_ids=None if user.is_superuser else user_organization_ids(user))
