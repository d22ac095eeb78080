"""The active dual level of forward-mode AD (forward_ad.dual_level sets it; None when none is
active, and then ops compute no tangents). Its own module because dispatch reads it on every
op, and the engine, saved tensors and Functions too, all of which load before forward_ad."""
active = None
