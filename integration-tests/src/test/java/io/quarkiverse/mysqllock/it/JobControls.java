package io.quarkiverse.mysqllock.it;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import io.quarkiverse.mysqllock.it.FaultEnvironment.Slot;

/**
 * The fleet controls of the scheduling scenario, asked of a worker drawn at random through its admin resource, as an
 * operator would, between the faults (no fault lasts while one is asked): a run-now, or a pause of two to four seconds
 * and its resume. Each request is kept, with when it was sent and answered, for {@link JobChecker}.
 */
final class JobControls {

    /** The operator of the application's configuration, with the admin resource's role. */
    private static final String OPERATOR = "Basic "
            + Base64.getEncoder().encodeToString("operator:operator-secret".getBytes(StandardCharsets.UTF_8));

    /** A request: its action, the worker asked, when it was sent and answered (wall-clock µs), the status (-1: none). */
    record Request(String action, String worker, long sentAt, long answeredAt, int status) {

        boolean done() {
            return status / 100 == 2;
        }
    }

    private final FaultEnvironment env;
    private final List<Request> requests = new ArrayList<>();

    JobControls(FaultEnvironment env) {
        this.env = env;
    }

    /** After a fault's recovery: a run-now, a pause and its resume, or nothing (faults back to back too). */
    void act() throws InterruptedException {
        switch (env.random.nextInt(3)) {
            case 0 -> send("run-now");
            case 1 -> {
                Request pause = send("pause");
                Thread.sleep(2000 + env.random.nextInt(2001)); // two to four ticks skipped
                Request resume = send("resume");
                for (int attempt = 0; pause.done() && !resume.done() && attempt < 10; attempt++) {
                    Thread.sleep(500);
                    resume = send("resume"); // a job left paused would run no more
                }
            }
            default -> {
                // nothing
            }
        }
    }

    /** At the end: the job disabled for the whole fleet, so that the workers stop with nothing held. */
    void disable() {
        send("disable");
    }

    List<Request> requests() {
        return List.copyOf(requests);
    }

    private Request send(String action) {
        Slot slot = env.slots.get(env.random.nextInt(env.slots.size()));
        String worker = slot.worker;
        long sent = FaultJournal.now();
        int status;
        String body;
        try {
            HttpResponse<String> response = env.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + Workers.httpPort(slot.process) + "/mysql-lock/admin/jobs/"
                    + URLEncoder.encode(FaultJobs.JOB, StandardCharsets.UTF_8) + "/" + action + "?reason=fault-suite"))
                    .header("Authorization", OPERATOR).POST(HttpRequest.BodyPublishers.noBody())
                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            status = response.statusCode();
            body = response.body();
        } catch (IOException e) {
            status = -1;
            body = e.toString();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            status = -1;
            body = e.toString();
        }
        Request request = new Request(action, worker, sent, FaultJournal.now(), status);
        requests.add(request);
        env.options.log().printf("[controller] %s of %s asked of %s: %d %s%n", action, FaultJobs.JOB, worker, status,
                body.length() > 200 ? body.substring(0, 200) : body);
        return request;
    }
}
