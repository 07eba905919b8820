"""The way back: provider events verified, journaled, folded into delivery history.

``verify/`` proves where a request came from (one pure verifier per vendor),
``parse/`` reads each vendor's bodies into ``events.DeliveryEvent``, ``receiver``
journals every event before applying it once (``homing.store.inbound``,
``homing.store.delivery``), ``billing`` turns verified payments into plan changes,
``secrets`` keeps each provider account's inbound secret sealed, and ``report``
reconciles the journal per hour.
"""
