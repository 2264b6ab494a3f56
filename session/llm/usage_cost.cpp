#include "session/llm/usage_cost.h"

namespace rebound::session::llm {

void apply_cost(protocol::Usage& u, const protocol::Model& m) {
  u.total_tokens = u.input + u.output + u.cache_read + u.cache_write;
  u.cost_input = static_cast<double>(u.input) * m.cost.input / 1e6;
  u.cost_output = static_cast<double>(u.output) * m.cost.output / 1e6;
  u.cost_cache_read = static_cast<double>(u.cache_read) * m.cost.cache_read / 1e6;
  u.cost_cache_write = static_cast<double>(u.cache_write) * m.cost.cache_write / 1e6;
  u.cost_total = u.cost_input + u.cost_output + u.cost_cache_read + u.cost_cache_write;
}

}  // namespace rebound::session::llm
