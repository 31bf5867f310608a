# Sourced by the shell tests that start listeners: free_port prints a TCP port on 127.0.0.1
# that nothing listens on now (a random one from 20000-60000, so tests can run in parallel).
free_port() {
  local p
  for p in $(shuf -i 20000-60000 -n 50); do
    (echo >/dev/tcp/127.0.0.1/"$p") 2>/dev/null || { echo "$p"; return; }
  done
  return 1
}
