// aws-local-stepfunctions 3 targets Node.js 22; this adds the one newer
// built-in it uses, so that it also runs on Node.js 20.
if (typeof Promise.withResolvers !== "function") {
  Promise.withResolvers = function withResolvers() {
    let resolve, reject;
    const promise = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}
