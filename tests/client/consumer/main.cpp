// Starts the server given as argv[1], sends a prompt, waits for the work to end, prints the
// answer. Exit 0 when it is the echo model's answer.
#include <rebound/rpc_client.h>

#include <chrono>
#include <iostream>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  rebound::RpcClientOptions options;
  options.server_path = argv[1];
  options.args = {"--no-session"};
  rebound::RpcClient client(options);
  client.prompt_and_wait("from a consumer", std::chrono::seconds(10));
  const auto text = client.get_last_assistant_text();
  std::cout << text.value_or("(none)") << "\n";
  return text == "echo: from a consumer" ? 0 : 1;
}
