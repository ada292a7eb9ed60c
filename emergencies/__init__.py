"""Emergencies: keyword rules that answer at once with a safety message,
alert the landlord, and an asynchronous model check that confirms or stands
the alert down (never silently: without a verdict it stays an emergency)."""
