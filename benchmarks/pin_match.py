"""How long matching a WhatsApp location pin to the nearest home takes
(``properties.location.property_nearest``: a bounding box on the two
coordinate columns, then haversine in PostgreSQL, no PostGIS), for one
organization with N placed homes spread over a city, plus 50 000 homes of
other organizations in the same table.

Throwaway database on the embedded PostgreSQL; prints median and p95 in ms.

    .venv/bin/python benchmarks/pin_match.py [--homes 1000 5000 20000] [--queries 300]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from _django import django_start, throwaway_database

django_start()


def stats(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[round(0.95 * (len(ordered) - 1))]
    return f"median {statistics.median(ordered):.2f} ms  p95 {p95:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--homes", type=int, nargs="+", default=[1000, 5000, 20000])
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    rng = random.Random(19)
    with throwaway_database():
        from decimal import Decimal

        from properties.location import property_nearest
        from properties.models import Organization, Property

        def place(org: Organization, count: int, prefix: str) -> None:
            Property.objects.bulk_create(
                Property(
                    organization=org,
                    code=f"{prefix}-{n}",
                    address=f"{n} Street",
                    # Leeds and around: about 20 km x 20 km.
                    latitude=Decimal(f"{53.70 + rng.random() * 0.18:.6f}"),
                    longitude=Decimal(f"{-1.70 + rng.random() * 0.30:.6f}"),
                )
                for n in range(count)
            )

        others = Organization.objects.create(name="Others", slug="others")
        place(others, 50_000, "O")
        for homes in args.homes:
            org = Organization.objects.create(name=f"Agency {homes}", slug=f"agency-{homes}")
            place(org, homes, f"A{homes}")
            samples, found = [], 0
            for _ in range(args.queries):
                lat, lon = 53.70 + rng.random() * 0.18, -1.70 + rng.random() * 0.30
                started = time.perf_counter()
                match = property_nearest(organization_id=org.pk, latitude=lat, longitude=lon, max_metres=150)
                samples.append((time.perf_counter() - started) * 1000)
                found += match.property is not None or match.ambiguous
            print(f"{homes:>6} homes: {stats(samples)}  ({found}/{args.queries} pins had a home within 150 m)")


if __name__ == "__main__":
    main()
