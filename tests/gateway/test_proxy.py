"""The proxy is transparent: every answer through it is the gateway's own, byte for byte; requests
reach the gateway as sent; streaming streams; a gateway that is down is a 502 in its error shape;
many clients at once; bad input (binary, huge, chunked) passes untouched, recorder on or off."""

from __future__ import annotations

import json
import os
import socket
import threading
import time

import pytest

from planlineage.gateway.proxy import Upstream


def raw_exchange(url: str, request: bytes, timeout: float = 10) -> bytes:
    """The exact bytes of one answer to ``request`` (one request on a fresh connection)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            piece = sock.recv(65536)
            if not piece:
                return data
            data += piece
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        length = next((int(line.split(b":", 1)[1]) for line in lines if line.lower().startswith(b"content-length:")), 0)
        if b" 204 " in lines[0] or request.startswith(b"HEAD "):
            length = 0
        while len(rest) < length:
            piece = sock.recv(65536)
            if not piece:
                break
            rest += piece
        return head + b"\r\n\r\n" + rest


def without_keep_alive(answer: bytes) -> bytes:
    """The gateway's answer but its ``Connection: keep-alive``: the header of its own connection
    (hop-by-hop), the one the proxy does not pass on (its own connection to the client is kept
    alive all the same)."""
    assert b"\r\nConnection: keep-alive\r\n" in answer.partition(b"\r\n\r\n")[0]
    return answer.replace(b"\r\nConnection: keep-alive\r\n", b"\r\n", 1)


def request(method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: whoever", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


CALLS = [
    request("GET", "/api_versions"),
    request("GET", "/v1/info"),
    request("GET", "/info"),
    request("HEAD", "/v2/info"),
    request("GET", "/v3/no/such/path?a=1&b=%20x"),
    request("DELETE", "/v1/sessions/6d1d5c31-0000-4000-8000-000000000000"),
    request("POST", "/v2/sessions/x/configure-session", b"{\"statement\": \"SET 'a' = 'b'\"}"),
    request("GET", "/v3/sessions/x/operations/failing/result/0"),  # the gateway's 500, {"errors": [...]}
    request("OPTIONS", "/v1/sessions"),
    request("GET", "/slow?s=0.01"),
    request("GET", "/v2/sessions/x/operations/y/result/0?rowFormat=JSON"),
    request("GET", "/v1/sessions/x/operations/y/status"),
    request("POST", "/v3/sessions/x/statements", b"\x00\xffnot json", {"Content-Type": "application/json"}),
]


@pytest.mark.parametrize("exchange", CALLS, ids=lambda r: r.split(b"\r\n")[0].decode())
@pytest.mark.parametrize("lineage", ["off", "on"])
def test_every_answer_through_the_proxy_is_the_gateways_own_byte_for_byte(
    upstream, plain_proxy, recording_proxy, exchange, lineage
):
    proxy = plain_proxy if lineage == "off" else recording_proxy
    upstream.failing.add("failing")
    direct = raw_exchange(upstream.url, exchange)
    through = raw_exchange(proxy.url, exchange)
    assert direct.startswith(b"HTTP/1.1 ")
    assert through == without_keep_alive(direct)


def test_a_request_reaches_the_gateway_as_sent_but_its_hop_by_hop_headers(upstream, plain_proxy):
    body = json.dumps({"statement": "SELECT 'ünï'"}).encode()
    headers = {
        "Content-Type": "application/json",
        "X-Trace": "abc",
        "Keep-Alive": "timeout=5",
        "X-Hop": "dropped",
        "Connection": "close, X-Hop",
    }
    lines = ["POST /v3/sessions/s1/statements?x=%2F&y= HTTP/1.1", "Host: whoever"]
    lines += [f"{k}: {v}" for k, v in headers.items()] + [f"Content-Length: {len(body)}"]
    raw_exchange(plain_proxy.url, ("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    method, path, received = upstream.calls[-1]
    assert (method, path, received) == ("POST", "/v3/sessions/s1/statements?x=%2F&y=", body)


def test_the_gateway_sees_the_end_to_end_headers_and_its_own_host(upstream, plain_proxy):
    seen: list = []
    original = upstream.answer

    def spy(handler, body):
        seen.append(list(handler.headers.items()))
        return original(handler, body)

    upstream.answer = spy
    exchange = request("GET", "/v1/info", headers={"X-Trace": "abc", "Keep-Alive": "timeout=5", "Accept": "*/*"})
    raw_exchange(plain_proxy.url, exchange)
    assert seen[-1] == [("Host", f"127.0.0.1:{upstream.port}"), ("X-Trace", "abc"), ("Accept", "*/*")]


def test_a_chunked_answer_streams_piece_by_piece(upstream, plain_proxy):
    host, port = plain_proxy.url.removeprefix("http://").split(":")
    started = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request("GET", "/stream"))
        first = sock.recv(65536)
        first_after = time.monotonic() - started
        data = first
        while not data.endswith(b"0\r\n\r\n"):
            piece = sock.recv(65536)
            assert piece, "the connection ended before the last chunk"
            data += piece
    whole_after = time.monotonic() - started
    assert first_after < 0.5 < whole_after  # the first piece came before the gateway had sent the rest
    head, _, body = data.partition(b"\r\n\r\n")
    assert b"Transfer-Encoding: chunked" in head
    pieces = body.split(b"\r\n")[1::2]
    assert b"".join(pieces) == b"".join(f"piece {i}\n".encode() for i in range(5))


@pytest.mark.parametrize("path", ["/echo", "/v3/sessions/x/statements"])  # the second is read by the recorder
@pytest.mark.parametrize("size", [300_000, 20 * 1024 * 1024])  # the second is over the recorder's limit
def test_a_chunked_request_body_reaches_the_gateway_whole(upstream, recording_proxy, path, size):
    payload = os.urandom(size)
    pieces = [payload[:1000], *(payload[i : i + (1 << 20)] for i in range(1000, size, 1 << 20))]
    chunks = b"".join(b"%X\r\n%s\r\n" % (len(p), p) for p in pieces)
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
    raw_exchange(recording_proxy.url, head.encode() + chunks + b"0\r\n\r\n", timeout=60)
    assert upstream.calls[-1][2] == payload


@pytest.mark.parametrize("size", [1, 5 * 1024 * 1024, 20 * 1024 * 1024])
def test_binary_and_huge_bodies_pass_untouched_with_the_recorder_on(upstream, recording_proxy, size):
    payload = os.urandom(size)
    exchange = request("POST", "/echo", payload, {"Content-Type": "application/octet-stream"})
    assert raw_exchange(recording_proxy.url, exchange, timeout=60) == raw_exchange(upstream.url, exchange, timeout=60)


def test_a_large_answer_passes_whole(upstream, plain_proxy):
    exchange = request("GET", "/big")
    through = raw_exchange(plain_proxy.url, exchange, timeout=30)
    assert through == without_keep_alive(raw_exchange(upstream.url, exchange, timeout=30))
    assert len(through) > 3 * 1024 * 1024


def test_a_gateway_that_is_down_is_a_502_in_the_gateways_error_shape(start_proxy):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    running = start_proxy(f"http://127.0.0.1:{port}")
    answer = raw_exchange(running.url, request("POST", "/v3/sessions", b"{}"))
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 502 Bad Gateway\r\n")
    assert b"Content-Type: application/json" in head
    errors = json.loads(body)["errors"]
    assert len(errors) == 1 and f"127.0.0.1:{port}" in errors[0] and "cannot be reached" in errors[0]


def test_a_gateway_breaking_off_mid_answer_breaks_the_clients_answer_off_alike(upstream, plain_proxy):
    exchange = request("GET", "/broken")
    direct, through = raw_exchange(upstream.url, exchange), raw_exchange(plain_proxy.url, exchange)
    assert direct.endswith(b'\r\n\r\n{"cut": "here')  # 13 bytes of the 100 announced, then the end
    assert through == direct


def test_a_kept_alive_connection_the_gateway_closed_is_replaced_unseen(upstream, plain_proxy, client_of):
    client = client_of(plain_proxy.url)
    assert client.call("GET", "/info")[0] == 200
    assert plain_proxy.upstream._idle
    for conn in plain_proxy.upstream._idle:
        conn.sock.shutdown(socket.SHUT_RDWR)  # as if the gateway closed its idle connection
    assert client.call("GET", "/info") == (200, {"productName": "Apache Flink", "version": "2.3.0"})


def test_many_clients_at_once_are_served_side_by_side(upstream, recording_proxy, client_of):
    answers: list = []
    errors: list = []

    def client_loop():
        client = client_of(recording_proxy.url, version="")
        try:
            for _ in range(5):
                answers.append(client.call("GET", "/slow?s=0.1"))
        except Exception as error:  # collected, asserted below
            errors.append(error)

    threads = [threading.Thread(target=client_loop) for _ in range(20)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    took = time.monotonic() - started
    assert errors == []
    assert answers == [(200, {"slow": True})] * 100
    assert took < 5  # one at a time would take 100 x 0.1 s


def test_the_upstream_url_shown_has_no_credentials():
    upstream = Upstream("http://user:secret@gateway.example:8083/base/")
    assert upstream.url == "http://gateway.example:8083/base"
    assert (upstream.host_header, upstream.base_path) == ("gateway.example:8083", "/base")


def test_a_url_that_is_no_http_address_is_refused_with_what_to_give():
    with pytest.raises(ValueError, match="http://127.0.0.1:8083"):
        Upstream("127.0.0.1:8083")


def test_a_gateway_that_is_down_leaves_a_kept_alive_client_connection_usable_after_a_large_body(start_proxy):
    # A body over the size read whole is streamed: with the gateway down its rest was left unread,
    # and read as the connection's next request (the client's next call answered 400/414, or cut).
    import http.client

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    running = start_proxy(f"http://127.0.0.1:{port}")
    host, proxy_port = running.url.removeprefix("http://").split(":")
    client = http.client.HTTPConnection(host, int(proxy_port), timeout=10)
    try:
        client.request("POST", "/v3/sessions/x/statements", body=b"x" * (3 * 1024 * 1024))
        first = client.getresponse()
        assert first.status == 502 and "cannot be reached" in json.loads(first.read())["errors"][0]
        client.request("GET", "/v3/info")
        second = client.getresponse()
        assert second.status == 502 and "cannot be reached" in json.loads(second.read())["errors"][0]
    finally:
        client.close()


def _read_to_end(sock: socket.socket) -> bytes:
    data = b""
    while piece := sock.recv(65536):
        data += piece
    return data


def test_an_http_1_0_client_gets_a_streamed_answer_close_delimited(upstream, plain_proxy):
    host, port = plain_proxy.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"GET /stream HTTP/1.0\r\nHost: whoever\r\n\r\n")
        data = _read_to_end(sock)  # the proxy closes the connection at the answer's end
    head, _, body = data.partition(b"\r\n\r\n")
    assert b"Transfer-Encoding" not in head and b" 200 " in head.split(b"\r\n")[0]
    assert body == b"".join(f"piece {i}\n".encode() for i in range(5))


def test_an_http_1_0_client_asking_keep_alive_is_told_its_connection_is_kept(upstream, plain_proxy):
    # An HTTP/1.0 client keeps its connection only when the answer says so (the gateway's does).
    host, port = plain_proxy.url.removeprefix("http://").split(":")
    call = b"GET /v1/info HTTP/1.0\r\nHost: whoever\r\nConnection: keep-alive\r\n\r\n"
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        for _ in range(2):
            sock.sendall(call)
            data = b""
            while b"\r\n\r\n" not in data:
                data += sock.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))[15:])
            while len(body) < length:
                body += sock.recv(65536)
            assert b"\r\nConnection: keep-alive" in head
            assert json.loads(body)["version"] == "2.3.0"
