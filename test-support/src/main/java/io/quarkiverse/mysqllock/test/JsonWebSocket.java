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
 * JSON requests over a WebSocket, each answered by the message that carries its {@code id} (the Dev UI's JSON-RPC, the
 * browser's DevTools protocol); messages without a waiting id (events) are ignored.
 */
final class JsonWebSocket implements AutoCloseable {

    private final ObjectMapper mapper = new ObjectMapper();
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

    JsonWebSocket(URI uri, Duration connectWithin) {
        this.socket = HttpClient.newHttpClient().newWebSocketBuilder().connectTimeout(connectWithin)
                .buildAsync(uri, new Answers()).orTimeout(connectWithin.toMillis(), TimeUnit.MILLISECONDS).join();
    }

    /** A new request, to fill in before {@link #call}. */
    ObjectNode request() {
        return mapper.createObjectNode();
    }

    ObjectMapper mapper() {
        return mapper;
    }

    /** Sends the request with a new {@code id} and returns the message answering it, within {@code within}. */
    JsonNode call(ObjectNode request, Duration within) throws Exception {
        int id = ids.incrementAndGet();
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        pending.put(id, answer);
        request.put("id", id);
        socket.sendText(mapper.writeValueAsString(request), true).get(within.toMillis(), TimeUnit.MILLISECONDS);
        return answer.get(within.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        try {
            socket.sendClose(WebSocket.NORMAL_CLOSURE, "done").get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            socket.abort(); // the other side went first, or does not answer
        }
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
