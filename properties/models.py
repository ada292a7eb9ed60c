"""The landlord's world: organizations, their staff, properties, tenants and
tenancies. The bottom layer: it imports no other app of the project."""

from __future__ import annotations

import datetime

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import F, Q

from properties.working_time import holidays_check, zone_known

# International format: what Twilio sends without its "whatsapp:" prefix.
E164_PATTERN = r"^\+[1-9][0-9]{6,14}$"


class Country(models.TextChoices):
    GB = "GB", "Great Britain"
    IE = "IE", "Ireland"
    US = "US", "United States"


class RepairCategory(models.TextChoices):
    """What a repair is about: an issue's category and a contractor's trades."""

    PLUMBING = "plumbing", "Plumbing and leaks"
    HEATING = "heating", "Heating and hot water"
    ELECTRICAL = "electrical", "Electrical"
    GAS = "gas", "Gas"
    APPLIANCES = "appliances", "Appliances"
    DAMP_MOULD = "damp_mould", "Damp and mould"
    STRUCTURAL = "structural", "Structural, roof, windows and doors"
    SECURITY = "security", "Locks and security"
    PESTS = "pests", "Pests"
    SAFETY = "safety", "Fire, smoke and CO alarms"
    EXTERIOR = "exterior", "Exterior, garden and bins"
    OTHER = "other", "Other"


class Organization(models.Model):
    """A landlord or letting agency. Inbound WhatsApp messages are routed to it
    by its Messaging Service SID or one of its WhatsApp numbers."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=64, unique=True)
    country = models.CharField(max_length=2, choices=Country.choices, default=Country.GB)
    timezone = models.CharField(max_length=64, default="Europe/London")
    holiday_region = models.CharField(
        max_length=8,
        blank=True,
        default="",
        db_default="",
        help_text="Region whose public holidays are not working days for deadlines: ENG, WLS, SCT or NIR in "
        "Great Britain (blank: England's), a state code such as NY in the United States (blank: federal ones).",
    )
    messaging_service_sid = models.CharField(max_length=64, unique=True, null=True, blank=True)
    # None: follow the USE_LLM_ORCHESTRATION setting; True/False: override it.
    llm_orchestration_enabled = models.BooleanField(null=True, blank=True)
    notification_email = models.EmailField(blank=True, help_text="Where new issues and alerts are emailed.")
    auto_dispatch = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Offer routine and urgent repairs to the best-placed contractor at once, and to the next one "
        "after a decline or no answer, without waiting for a person. Emergencies always wait for a person.",
    )
    contact_whatsapp = models.CharField(
        max_length=32, blank=True, help_text="E.164 number that gets a WhatsApp message about new issues."
    )
    emergency_contact_name = models.CharField(max_length=200, blank=True)
    emergency_contact_phone = models.CharField(max_length=32, blank=True, help_text="E.164; alerted on emergencies.")
    emergency_contact_email = models.EmailField(blank=True)
    emergency_sensitivity = models.CharField(
        max_length=16,
        choices=[("high", "High: alert on weaker signs"), ("standard", "Standard"), ("low", "Low: fewer false alarms")],
        default="standard",
        db_default="standard",
        help_text="How readily the emergency classifier raises an alert (docs/emergencies.md). Keyword rules "
        "of your own always raise one.",
    )
    vision_enabled = models.BooleanField(
        default=True,
        db_default=True,
        help_text="Show tenants' photos to the model (docs/whatsapp.md). Off: it is only told a photo came.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(emergency_sensitivity__in=["high", "standard", "low"]),
                name="organization_emergency_sensitivity_valid",
            )
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        try:
            holidays_check(self.country, self.holiday_region)
        except ValueError as error:
            raise ValidationError({"holiday_region": str(error)}) from None
        if not zone_known(self.timezone):  # elsewhere read as UTC: deadlines and visit times hours out
            raise ValidationError(
                {"timezone": f"Unknown time zone {self.timezone!r}: use an IANA name such as Europe/London."}
            )


class WhatsAppNumber(models.Model):
    """A WhatsApp sender number that belongs to one organization (E.164, no prefix)."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="whatsapp_numbers")
    number = models.CharField(max_length=32, unique=True, help_text="E.164, e.g. +447700900000 (no 'whatsapp:').")

    class Meta:
        constraints = [
            # A number stored as "whatsapp:+44..." or "07700..." would route no message.
            models.CheckConstraint(
                condition=Q(number__regex=E164_PATTERN),
                name="whatsapp_number_e164",
                violation_error_message="Use the international format with the country code and no 'whatsapp:', "
                "e.g. +447700900000.",
            ),
        ]

    def __str__(self) -> str:
        return self.number


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        MANAGER = "manager", "Manager"
        STAFF = "staff", "Staff"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MANAGER)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "organization"], name="membership_unique_user_org"),
            models.CheckConstraint(condition=Q(role__in=["owner", "manager", "staff"]), name="membership_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} @ {self.organization} ({self.role})"


class Property(models.Model):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="properties")
    code = models.CharField(max_length=32, help_text="The agency's own short reference, e.g. FLAT-3A.")
    address = models.CharField(max_length=300)
    postcode = models.CharField(max_length=16, blank=True)
    # WGS84, for matching a tenant's location pin to the nearest property.
    latitude = models.DecimalField(max_digits=9, decimal_places=6, null=True, blank=True)
    longitude = models.DecimalField(max_digits=9, decimal_places=6, null=True, blank=True)
    access_notes = models.TextField(
        blank=True,
        default="",
        db_default="",
        help_text="How a contractor gets in: keys, codes, parking. Sent with a job.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "properties"
        ordering = ["code"]
        constraints = [models.UniqueConstraint(fields=["organization", "code"], name="property_unique_code_per_org")]
        indexes = [GinIndex(fields=["address"], name="property_address_trgm", opclasses=["gin_trgm_ops"])]

    def __str__(self) -> str:
        return f"{self.code}: {self.address}"


class Tenant(models.Model):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="tenants")
    name = models.CharField(max_length=200)
    phone = models.CharField(max_length=32, help_text="E.164, e.g. +447700900123")
    email = models.EmailField(blank=True)
    # The WhatsApp profile (ProfileName, WaId) last seen from this tenant's number.
    whatsapp_profile_name = models.CharField(max_length=200, blank=True, default="", db_default="")
    wa_id = models.CharField(max_length=32, blank=True, default="", db_default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["organization", "phone"], name="tenant_unique_phone_per_org"),
            models.CheckConstraint(condition=Q(phone__regex=E164_PATTERN), name="tenant_phone_e164"),
        ]

    def __str__(self) -> str:
        return self.name


class Tenancy(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="tenancies")
    property = models.ForeignKey(Property, on_delete=models.CASCADE, related_name="tenancies")
    start_date = models.DateField()
    end_date = models.DateField(null=True, blank=True, help_text="Empty while the tenancy runs.")

    class Meta:
        verbose_name_plural = "tenancies"
        ordering = ["-start_date"]
        constraints = [
            models.CheckConstraint(
                condition=Q(end_date__isnull=True) | Q(end_date__gte=models.F("start_date")),
                name="tenancy_end_after_start",
            ),
            models.UniqueConstraint(fields=["tenant", "property", "start_date"], name="tenancy_unique_start"),
        ]

    def __str__(self) -> str:
        return f"{self.tenant} at {self.property.code}"


def _weekdays() -> list[int]:
    return [0, 1, 2, 3, 4]


class Contractor(models.Model):
    """Someone the organization sends repairs to. Their WhatsApp number is how
    their messages are recognised: they go to dispatch, never to the tenant's
    assistant (``orchestration/contractor_turns.py``)."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="contractors")
    name = models.CharField(max_length=200)
    trades = ArrayField(
        models.CharField(max_length=16, choices=RepairCategory.choices),
        default=list,
        blank=True,
        help_text="The repair categories they take.",
    )
    areas = ArrayField(
        models.CharField(max_length=8),
        default=list,
        blank=True,
        help_text="Postcode districts they cover, e.g. LS1, LS6 (none: everywhere).",
    )
    whatsapp = models.CharField(
        max_length=32,
        blank=True,
        validators=[RegexValidator(E164_PATTERN, "Use the international format, e.g. +447700900123.")],
        help_text="E.164; jobs are offered here with Accept / Decline.",
    )
    email = models.EmailField(blank=True, help_text="Jobs are also sent here, with the tenant's photos.")
    callout_limit = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="What they may spend on a call-out without asking.",
    )
    working_days = ArrayField(
        models.PositiveSmallIntegerField(), default=_weekdays, blank=True, help_text="0 = Monday ... 6 = Sunday."
    )
    work_starts = models.TimeField(default=datetime.time(8, 0))
    work_ends = models.TimeField(default=datetime.time(17, 0))
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "whatsapp"],
                condition=~Q(whatsapp=""),
                name="contractor_whatsapp_unique",
                violation_error_message="Another contractor of this organization has that WhatsApp number.",
            ),
            models.CheckConstraint(condition=Q(work_starts__lt=F("work_ends")), name="contractor_hours_valid"),
        ]

    def __str__(self) -> str:
        return self.name
