import datetime

import factory
from django.contrib.auth.models import User

from issues.models import Issue
from properties.models import Membership, Organization, Property, Tenancy, Tenant, WhatsAppNumber


class OrganizationFactory(factory.django.DjangoModelFactory[Organization]):
    class Meta:
        model = Organization

    name = factory.Sequence(lambda n: f"Agency {n}")
    slug = factory.Sequence(lambda n: f"agency-{n}")
    country = "GB"


class WhatsAppNumberFactory(factory.django.DjangoModelFactory[WhatsAppNumber]):
    class Meta:
        model = WhatsAppNumber

    organization = factory.SubFactory(OrganizationFactory)
    number = factory.Sequence(lambda n: f"+1415555{n:04d}")


class PropertyFactory(factory.django.DjangoModelFactory[Property]):
    class Meta:
        model = Property

    organization = factory.SubFactory(OrganizationFactory)
    code = factory.Sequence(lambda n: f"PROP-{n}")
    address = factory.Sequence(lambda n: f"{n} Test Street, Leeds")
    postcode = "LS1 1AA"


class TenantFactory(factory.django.DjangoModelFactory[Tenant]):
    class Meta:
        model = Tenant

    organization = factory.SubFactory(OrganizationFactory)
    name = factory.Sequence(lambda n: f"Tenant {n}")
    # A range no test names: in +447700900nnn the sequence reached fixtures' own numbers (+447700900123).
    phone = factory.Sequence(lambda n: f"+4477005{n:05d}")


class TenancyFactory(factory.django.DjangoModelFactory[Tenancy]):
    class Meta:
        model = Tenancy

    tenant = factory.SubFactory(TenantFactory)
    property = factory.SubFactory(PropertyFactory, organization=factory.SelfAttribute("..tenant.organization"))
    start_date = datetime.date(2026, 1, 1)


class UserFactory(factory.django.DjangoModelFactory[User]):
    class Meta:
        model = "auth.User"

    username = factory.Sequence(lambda n: f"user{n}")
    is_staff = True
    password = factory.django.Password("password")


class MembershipFactory(factory.django.DjangoModelFactory[Membership]):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    organization = factory.SubFactory(OrganizationFactory)


class IssueFactory(factory.django.DjangoModelFactory[Issue]):
    class Meta:
        model = Issue

    organization = factory.SubFactory(OrganizationFactory)
    property = factory.SubFactory(PropertyFactory, organization=factory.SelfAttribute("..organization"))
    reference = factory.Sequence(lambda n: f"R-{n:06d}")
    title = "Leaking kitchen tap"
    description = "The kitchen tap drips constantly."
    category = "plumbing"
