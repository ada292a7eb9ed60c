"""Zero-touch repairs: N tenants report through the real webhook, the
worker's processing and dispatch, with the scripted model, scripted
contractors (accept, decline or stay silent at the given rates; tap or type
their times), tenants who pick the first time, beat's jobs and a landlord who
acts only on what the admin's home page shows, on a frozen clock
(``stack/simulate_repairs.py``), on a throwaway embedded PostgreSQL.

Prints the share of routine reports booked with no landlord action, the
hours from first message to booking (median, p90), deadline clocks met per
urgency, messages sent per repair, and the cases needing a person that the
home page showed. Needs Redis (the scripted model's queue): ``make bench``
starts it.

    .venv/bin/python benchmarks/simulate_repairs.py [--tenants 60] [--accept 0.8] [--decline 0.1]
        [--typed 0.3] [--emergencies 0.1] [--days 10] [--seed 1]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import sys
import time

from workplace_lists import configure


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tenants", type=int, default=60)
    parser.add_argument("--accept", type=float, default=0.8, help="share of offers a contractor accepts")
    parser.add_argument("--decline", type=float, default=0.1, help="share declined (the rest: no answer)")
    parser.add_argument("--typed", type=float, default=0.3, help="share of contractors who type their times")
    parser.add_argument("--emergencies", type=float, default=0.1, help="share of reports that are a gas smell")
    parser.add_argument("--days", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    configure()
    import time_machine
    from django.conf import settings
    from django.core.management import call_command

    from stack.simulate_repairs import Setup, simulate

    settings.INBOUND_COALESCE_SECONDS = 0
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"  # not printed
    call_command("migrate", interactive=False, verbosity=0)
    setup = Setup(
        tenants=args.tenants,
        accept=args.accept,
        decline=args.decline,
        typed_times=args.typed,
        emergency_share=args.emergencies,
        days=args.days,
        seed=args.seed,
    )
    start = datetime.datetime(2026, 11, 30, 8, 0, tzinfo=datetime.UTC)  # a Monday morning
    began = time.perf_counter()
    # The console sender prints each WhatsApp message; the figures are what matter here.
    with time_machine.travel(start, tick=False) as clock, contextlib.redirect_stdout(io.StringIO()):
        result = simulate(setup, clock=clock, start=start)
    print(
        f"{args.tenants} tenants, contractors accept {args.accept:.0%} / decline {args.decline:.0%} / "
        f"silent {1 - args.accept - args.decline:.0%}, {args.typed:.0%} type their times, "
        f"{args.emergencies:.0%} emergencies, {args.days} days, seed {args.seed}"
    )
    for line in result.lines():
        print(f"  {line}")
    if result.unsurfaced:
        print(f"  not on the home page: {', '.join(result.unsurfaced)}")
    print(f"  ({time.perf_counter() - began:.0f} s of wall time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
