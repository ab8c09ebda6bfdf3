import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;

/** Sequential POSTs to /locks/{name} (acquire, fencing token, release): prints p50 and p99 in microseconds. */
public class NativeFigures {
    public static void main(String[] args) throws Exception {
        String base = args[0];
        int warmup = Integer.parseInt(args[1]);
        int count = Integer.parseInt(args[2]);
        HttpClient client = HttpClient.newHttpClient();
        long[] micros = new long[count];
        for (int i = -warmup; i < count; i++) {
            HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/locks/figures-" + (i & 7)))
                    .POST(HttpRequest.BodyPublishers.noBody()).build();
            long start = System.nanoTime();
            HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new IllegalStateException(response.statusCode() + " " + response.body());
            }
            if (i >= 0) {
                micros[i] = (System.nanoTime() - start) / 1000;
            }
        }
        Arrays.sort(micros);
        System.out.println(micros[count / 2] + " " + micros[count * 99 / 100]);
    }
}
