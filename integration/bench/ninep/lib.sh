# Shell functions the 9P benchmark scripts share (sourced by run.sh and ab.sh).

# wait_ports PORT...: wait until each loopback TCP port takes a connection (a
# daemon just started listening); exit 3 after 10 s on one that does not.
wait_ports() {
	local port i
	for port in "$@"; do
		for i in $(seq 100); do
			(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
			[ "$i" = 100 ] && { echo "server on port $port did not start" >&2; exit 3; }
			sleep 0.1
		done
	done
}
