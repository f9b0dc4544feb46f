// A stand-in for Spring's class of the same name (spring-web 6), with its superclass as in
// Spring, so that resilience4j's exception lists match it as they would Spring's own.
package org.springframework.web.client;

public class RestClientResponseException extends RestClientException {
    public RestClientResponseException(String msg) {
        super(msg);
    }
}
