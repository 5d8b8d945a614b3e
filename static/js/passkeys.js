/* Passkeys (WebAuthn): the settings page's "Add a passkey" and the log-in page's "Sign in with a
   passkey". The server gives the options (JSON, binary fields in base64url) and checks the answer
   (social.passkeys); this only turns base64url into bytes and back around the browser's call. */
(function () {
  "use strict";

  function bytes(text) {
    const base64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
    return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  }

  function text(buffer) {
    let binary = "";
    new Uint8Array(buffer).forEach((b) => { binary += String.fromCharCode(b); });
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function credentialJSON(credential) {
    const r = credential.response;
    const response = { clientDataJSON: text(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = text(r.attestationObject);
      if (r.getTransports) response.transports = r.getTransports();
    }
    if (r.authenticatorData) {
      response.authenticatorData = text(r.authenticatorData);
      response.signature = text(r.signature);
      response.userHandle = r.userHandle ? text(r.userHandle) : null;
    }
    return {
      id: credential.id,
      rawId: text(credential.rawId),
      type: credential.type,
      response,
      clientExtensionResults: credential.getClientExtensionResults(),
    };
  }

  async function post(url, body) {
    const response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": window.ugcsite.csrfToken(), "Content-Type": "application/json" },
      body: JSON.stringify(body || {}),
    });
    let data = null;
    try { data = await response.json(); } catch (e) { /* not JSON: the sentence below */ }
    if (!response.ok) throw new Error((data && data.detail) || "The server did not answer; try again.");
    return data;
  }

  function wire(button, run) {
    const status = document.querySelector("[data-passkey-status]");
    if (!window.PublicKeyCredential) {
      button.hidden = true;
      return;
    }
    button.addEventListener("click", async () => {
      button.disabled = true;
      if (status) status.textContent = "Waiting for your passkey…";
      try {
        const done = await run();
        window.location.assign(done.next || "/");
      } catch (error) {
        if (status) status.textContent = error.name === "NotAllowedError" ? "The passkey was not used; try again." : error.message;
        button.disabled = false;
      }
    });
  }

  const register = document.querySelector("[data-passkey-register]");
  if (register) {
    wire(register, async () => {
      const options = await post(register.dataset.options);
      options.challenge = bytes(options.challenge);
      options.user.id = bytes(options.user.id);
      (options.excludeCredentials || []).forEach((c) => { c.id = bytes(c.id); });
      const credential = await navigator.credentials.create({ publicKey: options });
      return post(register.dataset.submit, credentialJSON(credential));
    });
  }

  const signIn = document.querySelector("[data-passkey-sign-in]");
  if (signIn) {
    wire(signIn, async () => {
      const options = await post(signIn.dataset.options);
      options.challenge = bytes(options.challenge);
      (options.allowCredentials || []).forEach((c) => { c.id = bytes(c.id); });
      const credential = await navigator.credentials.get({ publicKey: options });
      return post(signIn.dataset.submit + "?next=" + encodeURIComponent(signIn.dataset.next || "/"), credentialJSON(credential));
    });
  }
})();
