"""Layer 4, tuning: the tuner (measures variants through dispatch) and planning with policies.

It sits above dispatch (it measures the variants dispatch would run) and below the interfaces
(``prism tune``, ``prism bench``); dispatch reads what it stores through the tuning records of
the knowledge layer (``prism_core/_tuning/tuning_records.py``), never by calling up.
"""
