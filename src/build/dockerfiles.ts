// The Dockerfiles the providers write (API.md "Building from source"), each starting FROM an overridable
// base image. Nothing from the repository is interpolated: only file names svc chose and the operator's
// base images, so a repository cannot inject instructions.
import type { Config } from '../config.js';
import type { Provider } from './detect.js';

interface Input {
  files: ReadonlySet<string>;
  images: Config['buildImages'];
}

/** One Dockerfile per provider; `files` picks between variants (lock file, Maven or Gradle). */
export function generateDockerfile(provider: Provider, { files, images }: Input): string {
  switch (provider) {
    case 'static':
      return lines(
        `FROM ${images.static}`,
        'COPY . /srv',
        'EXPOSE 80',
        // Reset any ENTRYPOINT of the base so the command below is the whole command line.
        'ENTRYPOINT []',
        'CMD ["caddy","file-server","--root","/srv","--listen",":80"]',
      );
    case 'node':
      return lines(
        `FROM ${images.node}`,
        'WORKDIR /app',
        'COPY . .',
        files.has('package-lock.json') || files.has('npm-shrinkwrap.json') ? 'RUN npm ci' : 'RUN npm install',
        'RUN npm run build --if-present',
        'ENV PORT=3000',
        'EXPOSE 3000',
        'CMD ["npm","start"]',
      );
    case 'go':
      return lines(
        `FROM ${images.go} AS build`,
        'WORKDIR /src',
        'COPY . .',
        'RUN CGO_ENABLED=0 go build -o /out/app .',
        `FROM ${images.goRuntime}`,
        'COPY --from=build /out/app /app',
        'ENV PORT=8080',
        'EXPOSE 8080',
        'ENTRYPOINT ["/app"]',
      );
    case 'java': {
      const maven = files.has('pom.xml');
      return lines(
        `FROM ${maven ? images.maven : images.gradle} AS build`,
        'WORKDIR /src',
        'COPY . .',
        maven
          ? 'RUN mvn -B -q -DskipTests package && cp "$(ls target/*.jar | grep -v original | head -n 1)" /app.jar'
          : 'RUN gradle build -x test --no-daemon -q && cp "$(ls build/libs/*.jar | grep -v plain | head -n 1)" /app.jar',
        `FROM ${images.javaRuntime}`,
        'COPY --from=build /app.jar /app.jar',
        'ENV PORT=8080',
        'EXPOSE 8080',
        'CMD ["java","-jar","/app.jar"]',
      );
    }
  }
}

const lines = (...l: string[]) => l.join('\n') + '\n';
