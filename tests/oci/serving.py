"""What tests/oci's test servers share: serve until SIGTERM, SIGINT or a
timeout, after writing the listening ports (one a line) to a port file."""

import os
import signal
import threading


def serve(servers, port_file, timeout):
    """Serves every server (the first on this thread); returns on SIGTERM,
    SIGINT or after `timeout` seconds."""
    for server in servers:
        server.daemon_threads = True

    def stop(*_):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, timeout)

    for server in servers[1:]:
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                         daemon=True).start()
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("".join(f"{s.server_address[1]}\n" for s in servers))
    os.replace(tmp, port_file)
    try:
        servers[0].serve_forever(poll_interval=0.2)
    except SystemExit:
        pass
    finally:
        for server in servers:
            server.server_close()
