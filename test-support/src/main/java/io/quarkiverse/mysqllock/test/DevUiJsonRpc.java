package io.quarkiverse.mysqllock.test;

import java.net.URI;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Calls the Dev UI's JSON-RPC methods the way its pages do: JSON-RPC 2.0 over the WebSocket
 * {@code /q/dev-ui/json-rpc-ws}, the method named {@code <extension namespace>_<method>} (as listed in
 * {@code /q/dev-ui/devui-jsonrpc-data.js}). One socket, answers matched to
 * requests by id.
 */
public final class DevUiJsonRpc implements AutoCloseable {

    private static final Duration ANSWER_WITHIN = Duration.ofSeconds(30);

    private final String namespace;
    private final JsonWebSocket socket;

    /** @param httpUrl the application's root, such as {@code http://localhost:8080} */
    public DevUiJsonRpc(String httpUrl, String namespace) {
        this.namespace = namespace;
        this.socket = new JsonWebSocket(URI.create("ws" + httpUrl.substring("http".length()) + "/q/dev-ui/json-rpc-ws"),
                ANSWER_WITHIN);
    }

    /** The {@code result.object} of the answer; fails with the JSON-RPC error when there is one. */
    public JsonNode call(String method, Map<String, Object> params) throws Exception {
        ObjectNode request = socket.request().put("jsonrpc", "2.0").put("method", namespace + "_" + method);
        request.set("params", socket.mapper().valueToTree(params));
        JsonNode message = socket.call(request, ANSWER_WITHIN);
        if (message.has("error")) {
            throw new IllegalStateException("JSON-RPC " + method + " failed: " + message.get("error"));
        }
        return message.path("result").path("object");
    }

    public JsonNode call(String method) throws Exception {
        return call(method, Map.of());
    }

    @Override
    public void close() {
        socket.close();
    }
}
