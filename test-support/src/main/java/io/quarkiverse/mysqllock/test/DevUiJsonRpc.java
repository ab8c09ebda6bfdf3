package io.quarkiverse.mysqllock.test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Calls the Dev UI's JSON-RPC methods the way its pages do: JSON-RPC 2.0 over the WebSocket
 * {@code /q/dev-ui/json-rpc-ws}, the method named {@code <extension namespace>_<method>} (as listed in
 * {@code /q/dev-ui/devui-jsonrpc-data.js}). One socket, answers matched to
 * requests by id.
 */
public final class DevUiJsonRpc implements AutoCloseable {

    private static final Duration ANSWER_WITHIN = Duration.ofSeconds(30);

    private final ObjectMapper mapper = new ObjectMapper();
    private final String namespace;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

    /** @param httpUrl the application's root, such as {@code http://localhost:8080} */
    public DevUiJsonRpc(String httpUrl, String namespace) {
        this.namespace = namespace;
        URI uri = URI.create("ws" + httpUrl.substring("http".length()) + "/q/dev-ui/json-rpc-ws");
        this.socket = HttpClient.newHttpClient().newWebSocketBuilder().connectTimeout(ANSWER_WITHIN)
                .buildAsync(uri, new Answers()).join();
    }

    /** The {@code result.object} of the answer; fails with the JSON-RPC error when there is one. */
    public JsonNode call(String method, Map<String, Object> params) throws Exception {
        int id = ids.incrementAndGet();
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        pending.put(id, answer);
        ObjectNode request = mapper.createObjectNode().put("jsonrpc", "2.0").put("id", id)
                .put("method", namespace + "_" + method);
        request.set("params", mapper.valueToTree(params));
        socket.sendText(mapper.writeValueAsString(request), true).join();
        JsonNode message = answer.get(ANSWER_WITHIN.toMillis(), TimeUnit.MILLISECONDS);
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
        socket.sendClose(WebSocket.NORMAL_CLOSURE, "done").join();
    }

    private final class Answers implements WebSocket.Listener {

        private final StringBuilder text = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                String message = text.toString();
                text.setLength(0);
                try {
                    JsonNode json = mapper.readTree(message);
                    CompletableFuture<JsonNode> answer = json.has("id") ? pending.remove(json.get("id").asInt()) : null;
                    if (answer != null) {
                        answer.complete(json);
                    }
                } catch (Exception e) {
                    pending.values().forEach(answer -> answer.completeExceptionally(e));
                }
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            pending.values().forEach(answer -> answer.completeExceptionally(error));
        }
    }
}
