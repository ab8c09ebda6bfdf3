package io.quarkiverse.mysqllock.deployment.testing;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import io.quarkiverse.mysqllock.test.TestDatabase;
import io.quarkus.runtime.BlockingOperationControl;
import io.quarkus.runtime.IOThreadDetector;

/**
 * An embedded server of a test class's own, with privilege checks on: only then does it show each session's client
 * port (what {@code TcpProxy.stallConnection} and {@code stallAnswers} need). Register it as a static field with
 * {@code @RegisterExtension}; the test class runs blocking calls on its own threads.
 */
public final class OwnServer implements BeforeAllCallback, AfterAllCallback {

    private TestDatabase db;

    public TestDatabase db() {
        return db;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        BlockingOperationControl.setIoThreadDetector(new IOThreadDetector[0]);
        db = TestDatabase.startEmbedded().withPrivilegeChecks();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (db != null) {
            db.stop();
        }
    }
}
