#pragma once
// A SettingsStore that keeps the "file" in memory and records every persisted patch.

#include <vector>

#include "session/settings.h"
#include "session/settings_store.h"

namespace rebound::testing {

class MemorySettingsStore : public session::SettingsStore {
 public:
  explicit MemorySettingsStore(protocol::Json initial = protocol::Json::object())
      : data_(std::move(initial)) {}

  protocol::Json load() override { return data_; }
  void persist(const protocol::Json& patch) override {
    patches.push_back(patch);
    data_ = session::deep_merge(data_, patch);
  }

  const protocol::Json& data() const { return data_; }
  std::vector<protocol::Json> patches;

 private:
  protocol::Json data_;
};

}  // namespace rebound::testing
