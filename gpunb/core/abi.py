"""What generated kernels and the runtime that launches them must agree on, in one place
(pure constants: codegen and the runtime both import this, neither imports the other).

Split reductions (:mod:`gpunb.core.kernels.reduction`, :mod:`gpunb.core.runtime.scratch`):
each output group of a launch takes tickets from a zeroed counter at the start of a scratch
buffer, and the partial states follow the counters.
"""

TICKETS = 4096              # output groups of one split launch, at most
TICKET_BYTES = 4 * TICKETS  # the partial states start here
