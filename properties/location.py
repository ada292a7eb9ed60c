"""Where a property is on the map: checking coordinates, and the properties
nearest to a WhatsApp location pin.

Distances are great-circle (haversine, Earth radius 6 371 008.8 m) computed by
PostgreSQL over one organization's properties that have coordinates, after a
bounding-box filter on the two columns. An organization manages hundreds or a
few thousand homes, so a scan of its rows is cheap and PostGIS is not needed
(docs/whatsapp-pins-buttons.md).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Collection
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.db.models import ExpressionWrapper, F, FloatField, QuerySet, Value
from django.db.models.functions import ASin, Cos, Least, Power, Radians, Sin, Sqrt

from properties.address_match import building_label
from properties.models import Property

EARTH_RADIUS_METRES = 6_371_008.8
# Homes this much further than the nearest one are as near as it: a pin is
# rarely better than 10-20 m, and flats in one building share coordinates.
# Two such homes are a question ("which flat?"), never a guess.
TIE_METRES = 25.0
SIX_PLACES = Decimal("0.000001")


def coordinate_parse(value: object, *, name: str, limit: int) -> Decimal | None:
    """A latitude (``limit`` 90) or longitude (180) as a Decimal with six
    places, None for an empty value; ``ValidationError`` keyed by ``name``
    for anything that is not a finite number in range."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValidationError({name: f"{name.capitalize()} must be a number in decimal degrees."}) from None
    if not number.is_finite() or abs(number) > limit:
        raise ValidationError({name: f"{name.capitalize()} must be between -{limit} and {limit}."})
    return number.quantize(SIX_PLACES)


def coordinates_clean(latitude: object, longitude: object) -> tuple[Decimal | None, Decimal | None]:
    """Both coordinates checked (WGS84 decimal degrees), or both empty: a
    property with one coordinate cannot be placed."""
    errors: dict[str, str] = {}
    parsed: dict[str, Decimal | None] = {}
    for name, value, limit in (("latitude", latitude, 90), ("longitude", longitude, 180)):
        try:
            parsed[name] = coordinate_parse(value, name=name, limit=limit)
        except ValidationError as error:
            errors.update({key: messages[0] for key, messages in error.message_dict.items()})
    if not errors and (parsed["latitude"] is None) != (parsed["longitude"] is None):
        missing = "latitude" if parsed["latitude"] is None else "longitude"
        errors[missing] = "Give both latitude and longitude, or neither."
    if errors:
        raise ValidationError(errors)
    return parsed["latitude"], parsed["longitude"]


@dataclass
class NearMatch:
    """``property`` when one home is nearest; ``candidates`` when several are
    about as near (ask which); neither when nothing is within reach."""

    property: Property | None = None
    metres: float | None = None
    candidates: list[Property] = field(default_factory=list)
    same_building: bool = False

    @builtins.property
    def ambiguous(self) -> bool:
        return len(self.candidates) > 1


def distance_metres(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Haversine distance in Python (the same formula as the query), for tests and the admin."""
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    a = (
        math.sin((phi2 - phi1) / 2) ** 2
        + math.cos(phi1) * math.cos(phi2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    )
    return 2 * EARTH_RADIUS_METRES * math.asin(min(1.0, math.sqrt(a)))


def properties_near(
    *, organization_id: int, latitude: float, longitude: float, max_metres: float, codes: Collection[str] | None = None
) -> QuerySet[Property]:
    """The organization's properties (only ``codes`` when given) within
    ``max_metres`` of the point, nearest first, each with ``metres``."""
    phi, lam = math.radians(latitude), math.radians(longitude)
    # Bounding box first (a degree of latitude is ~111 km everywhere; of
    # longitude, that times cos(latitude)), then the exact distance.
    dlat = math.degrees(max_metres / EARTH_RADIUS_METRES)
    dlon = dlat / max(math.cos(phi), 1e-6)
    half_a = Power(Sin((Radians(F("latitude")) - Value(phi)) / Value(2.0)), 2) + Cos(Value(phi)) * Cos(
        Radians(F("latitude"))
    ) * Power(Sin((Radians(F("longitude")) - Value(lam)) / Value(2.0)), 2)
    metres = ExpressionWrapper(
        Value(2 * EARTH_RADIUS_METRES) * ASin(Sqrt(Least(half_a, Value(1.0)))), output_field=FloatField()
    )
    queryset = Property.objects.all() if codes is None else Property.objects.filter(code__in=list(codes))
    return (
        queryset.filter(
            organization_id=organization_id,
            latitude__isnull=False,
            longitude__isnull=False,
            latitude__range=(Decimal(latitude - dlat), Decimal(latitude + dlat)),
            longitude__range=(Decimal(longitude - dlon), Decimal(longitude + dlon)),
        )
        .annotate(metres=metres)
        .filter(metres__lte=max_metres)
        .order_by("metres", "code")
    )


def property_nearest(
    *, organization_id: int, latitude: float, longitude: float, max_metres: float, codes: Collection[str] | None = None
) -> NearMatch:
    """The home a pin points at (among ``codes`` when given): the nearest
    within ``max_metres``, unless another is within ``TIE_METRES`` of it too
    (then the candidates)."""
    queryset = properties_near(
        organization_id=organization_id, latitude=latitude, longitude=longitude, max_metres=max_metres, codes=codes
    )
    near = list(queryset[:10])
    if not near:
        return NearMatch()
    nearest = near[0]
    tied = [p for p in near if p.metres <= nearest.metres + TIE_METRES]  # type: ignore[attr-defined]
    if len(tied) > 1:
        buildings = {building_label(p.address).lower() for p in tied}
        return NearMatch(candidates=tied, same_building=len(buildings) == 1)
    return NearMatch(property=nearest, metres=nearest.metres)  # type: ignore[attr-defined]
