"""Python grpcio's Generate through tessera router: each request's raw bytes (base64) in, the streamed
messages (base64), response headers, trailers and status out, read with grpcio's own framing and status
handling (the router serves Generate on its HTTP/2 streams, not through grpc-js)."""

import base64
import json
import sys

import grpc


def main():
    request = json.load(sys.stdin)
    answers = []
    with grpc.insecure_channel(request["grpc_address"]) as channel:
        generate = channel.unary_stream("/tessera.v1.Inference/Generate")
        for call in request["calls"]:
            stream = generate(
                base64.b64decode(call["request"]),
                timeout=call.get("timeout", 30),
                metadata=tuple(call.get("metadata", {}).items()),
            )
            answer = {"messages": [], "code": "OK", "details": ""}
            try:
                for message in stream:
                    answer["messages"].append(base64.b64encode(message).decode())
            except grpc.RpcError as error:
                answer["code"] = error.code().name
                answer["details"] = error.details()
            answer["headers"] = dict(stream.initial_metadata() or ())
            answer["trailers"] = dict(stream.trailing_metadata() or ())
            answers.append(answer)
    json.dump({"grpcio_version": grpc.__version__, "answers": answers}, sys.stdout)


if __name__ == "__main__":
    main()
