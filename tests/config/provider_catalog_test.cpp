// runtime.md section 2's provider rules without the wiring: the catalog, the provider a process
// starts with, the order keys are looked up in, which providers are offered, the first model.

#include "config/provider_catalog.h"

#include <doctest/doctest.h>

#include <map>

#include "tests/support/temp_dir.h"

using namespace rebound;
using config::KeyResolver;
using rebound::testing::TempDir;

namespace {

config::Getenv env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST_CASE("provider rules: selection, the key order, what is offered, the first model") {
  TempDir dir;
  const auto file = dir.write("auth.json", R"({"anthropic":{"type":"api_key","key":"from-auth"}})");
  config::AuthStore auth(file, [] { return 0; });
  config::ModelsFile models_file;
  models_file.providers.push_back({"local", "", "http://127.0.0.1:9/v1", std::nullopt, {}});
  models_file.providers.push_back(
      {"keyed", "anthropic-messages", "", std::string("from-models"), {}});
  session::ModelRegistry models = session::ModelRegistry::with_builtins();
  const config::ProviderMap providers = config::provider_catalog(models_file, models);
  CHECK(providers.at("local").api == "openai-completions");
  CHECK(providers.at("keyed").api == "anthropic-messages");

  const session::Settings none;
  // No flag, no settings: the first built-in provider whose variable is set, else scripted.
  CHECK(*config::select_provider(providers, std::nullopt, false, none,
                                 env_of({{"ANTHROPIC_API_KEY", "x"}})) == "anthropic");
  CHECK(*config::select_provider(providers, std::nullopt, true, none,
                                 env_of({{"ANTHROPIC_API_KEY", "x"}})) == "scripted");
  const auto unknown =
      config::select_provider(providers, std::string("nope"), false, none, env_of({}));
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().kind == session::ErrorKind::not_found);

  // --api-key for the selected provider, then auth.json, then the variable, then models.json.
  const KeyResolver keys(providers, auth, env_of({{"OPENAI_API_KEY", "from-env"}}), "openai",
                         std::string("from-flag"));
  CHECK(keys.resolve("openai", "s")->source == "--api-key");
  CHECK(keys.resolve("anthropic", "s")->value == "from-auth");
  CHECK(keys.resolve("keyed", "s")->source == "models.json (provider 'keyed')");
  const KeyResolver no_flag(providers, auth, env_of({{"OPENAI_API_KEY", "from-env"}}), "openai",
                            std::nullopt);
  CHECK(no_flag.resolve("openai", "s")->source == "the environment variable OPENAI_API_KEY");
  // Offered: a key, or a custom provider that needs none; not a built-in one without a key.
  const KeyResolver bare(providers, auth, env_of({}), "scripted", std::nullopt);
  CHECK(bare.offered("scripted"));
  CHECK(bare.offered("local"));
  CHECK(bare.offered("anthropic"));
  CHECK_FALSE(bare.offered("openai"));

  CHECK(config::start_model(models, "scripted", std::nullopt, false, none)->id == "echo");
  CHECK(config::start_model(models, "scripted", std::nullopt, true, none)->id == "script");
  const auto missing = config::start_model(models, "scripted", std::string("gpt-9"), false, none);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.rfind("unknown model 'scripted/gpt-9' (available: ", 0) == 0);
}
