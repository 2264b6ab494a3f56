#pragma once
// Cost of a request from its usage and the model's prices (per million tokens). Pure.

#include "protocol/messages.h"
#include "protocol/wire_types.h"

namespace rebound::session::llm {

/// Fills usage.cost_* and total_tokens from the token counts and the model's prices.
void apply_cost(protocol::Usage& usage, const protocol::Model& model);

}  // namespace rebound::session::llm
